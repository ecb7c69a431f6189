#!/usr/bin/python3
"""Which pipe the softmax analogs' instructions run on, per value, and whether one binds before the issue slots.

The sm_90 opcodes (low 9 bits of an instruction's first word, as dynamic.py reads them) were
identified by compiling opcodes.cu, kernels that repeat one operation 63 times (`--identify
OPCODES.cubin` prints each kernel's most frequent opcodes). Pipes on GH100: the ALU pipe (16
lanes per SM sub-partition, 64 thread instructions per SM per cycle: integer add, logic, shifts,
compare / min / max, select, data movement, FP32-to-FP16 packing) and the FMA pipes (FP32 at 128
per SM per cycle over the heavy and lite pipes; IMAD on the heavy one) — NVIDIA's answers on
its developer forum ("Separate CUDA core pipeline for FP16 and FP32", "INT32 and FP64 can be used
concurrently in the Volta architecture") and the CUDA C++ Programming Guide's throughput table
(compare, minimum, maximum, 32-bit integer add / logic / shift: 64 per SM per cycle on 9.0);
MUFU at 16. Opcodes not identified are listed and counted as ALU instructions for the bound, the
case least favourable to the issue slots.
Usage: pipes.py KERNELS.cubin | pipes.py --identify OPCODES.cubin
"""
import collections
import sys

import chain
import dynamic

NAMES = {0x002: "MOV", 0x007: "SEL", 0x008: "FSEL", 0x009: "FMNMX", 0x00B: "FSETP", 0x00C: "ISETP",
         0x010: "IADD3", 0x012: "LOP3", 0x016: "PRMT", 0x019: "SHF", 0x020: "FMUL", 0x021: "FADD",
         0x023: "FFMA", 0x024: "IMAD", 0x025: "IMAD.WIDE", 0x030: "HADD2", 0x03E: "F2FP", 0x108: "MUFU",
         0x141: "BSYNC", 0x145: "BSSY", 0x147: "BRA", 0x14D: "EXIT", 0x11D: "BAR", 0x181: "LDG",
         0x182: "LDC", 0x184: "LDS", 0x186: "STG", 0x188: "STS", 0x189: "SHFL"}
ALU = {"MOV", "SEL", "FSEL", "FMNMX", "FSETP", "ISETP", "IADD3", "LOP3", "PRMT", "SHF", "F2FP"}
FMA = {"FMUL", "FADD", "FFMA", "HADD2", "IMAD", "IMAD.WIDE"}
RATE = {"alu": 64, "fma": 128, "mufu": 16, "issue": 128}  # thread instructions per SM per cycle


def per_value(cubin):
    """{kernel: {opcode: executed instructions per value}} from two unrolled sizes of each analog."""
    hist = {}
    for name, text in dynamic.sections(cubin):
        if name.startswith(".text.row_softmax") or name.startswith(".text._Z") and "row_softmax" in name:
            hist[name] = collections.Counter(x["op"] for x in chain.executed(chain.decode(text)))
    out = {}
    for kernel, small, large in (("row_softmax_warp", 32, 64), ("row_softmax_reg", 4, 8),
                                 ("row_softmax_smem", 16, 32), ("row_softmax_block", 16, 32)):
        a = next((v for k, v in hist.items() if kernel in k and f"ILi{small}E" in k), None)
        b = next((v for k, v in hist.items() if kernel in k and f"ILi{large}E" in k), None)
        if a is not None and b is not None:
            out[kernel] = {op: (b[op] - a[op]) / (large - small) for op in set(a) | set(b) if b[op] != a[op]}
    return out


def main():
    if sys.argv[1:2] == ["--identify"]:
        for name, text in dynamic.sections(sys.argv[2]):
            if name.startswith(".text."):
                c = collections.Counter(o & 0x1FF for o in dynamic.opcodes(text))
                print(name[6:], ", ".join(f"{NAMES.get(k, hex(k))} {v}" for k, v in c.most_common(5)))
        return
    print("kernel               total  ALU  FMA  MUFU  other  unidentified        cycles/value/SM: ALU  FMA  MUFU  issue")
    for kernel, ops in per_value(sys.argv[1]).items():
        pipe = collections.Counter()
        unknown = []
        for op, n in ops.items():
            name = NAMES.get(op)
            key = "alu" if name in ALU else "fma" if name in FMA else "mufu" if name == "MUFU" else \
                "other" if name else "unknown"
            pipe[key] += n
            if not name and abs(n) > 1e-9:
                unknown.append(f"{hex(op)}:{n:g}")
        total = sum(ops.values())
        alu = pipe["alu"] + max(0.0, pipe["unknown"])
        print(f"{kernel:20s} {total:5.1f} {pipe['alu']:4.1f} {pipe['fma']:4.1f} {pipe['mufu']:5.1f} {pipe['other']:6.1f}  "
              f"{' '.join(unknown) or '-':18s}  {alu / RATE['alu']:5.2f} {pipe['fma'] / RATE['fma']:5.2f} "
              f"{pipe['mufu'] / RATE['mufu']:5.2f} {total / RATE['issue']:5.2f}")


if __name__ == "__main__":
    main()
