#!/usr/bin/python3
"""Each kernel's global loads (L) and stores (S) in program order, from an sm_90 cubin (no disassembler).

Usage: order.py KERNELS.cubin   (e.g. broadcast_add.cu compiled with nvcc -arch=sm_90 -O3 -cubin)
Prints one line per kernel: its name and the sequence, e.g. `LLS LLS LLS LLS` for a loop whose
values each load two operands and store one, one value after the other.
"""
import sys

import dynamic


def sequence(text):
    marks = {dynamic.GLOBAL[0]: "L", dynamic.GLOBAL[1]: "S"}
    seq = "".join(marks.get(op, "") for op in dynamic.opcodes(text))
    return seq.replace("S", "S ").strip()


def main():
    for name, text in dynamic.sections(sys.argv[1]):
        if name.startswith(".text."):
            print(name[6:], sequence(text))


if __name__ == "__main__":
    main()
