#!/usr/bin/python3
"""Instructions a warp executes in the softmax analogs (softmax_analogs.cu), from their sm_90 SASS.

Reads the kernels' .text sections from a cubin (no disassembler needed: an sm_90 instruction is
16 bytes and its opcode is the low 12 bits of the first word; EXIT 0x94d, BRA 0x947, CALL 0x944,
BSYNC 0x941, BAR 0xb1d, MUFU 0x308, as open-source sm_90 decoders document them) and counts, per
kernel, the instructions a warp of a full row executes:
- the code up to the last EXIT (what follows is the IEEE division's slow-path subroutine, called
  only for denormal or huge operands, and padding);
- minus, per division, the call set-up that the branch after FCHK skips on the fast path (from
  that BRA to the BSYNC after the CALL);
- minus, in the block kernels, the second stage of each block reduction (from the BRA after a
  BAR to the next BAR), which only warp 0 runs.
Two unrolled sizes of a kernel give the instructions per value (the difference over the values)
and per row and thread (the rest). Usage: dynamic.py KERNELS.cubin
"""
import struct
import sys

EXIT, BRA, CALL, BSYNC, BAR, MUFU = 0x94D, 0x947, 0x944, 0x941, 0xB1D, 0x308
GLOBAL = (0x981, 0x986)  # LDG, STG


def sections(path):
    data = open(path, "rb").read()
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    for name, _type, _flags, _addr, off, size in heads:
        end = data.index(b"\0", names + name)
        yield data[names + name:end].decode(), data[off:off + size]


def opcodes(text):
    return [struct.unpack_from("<Q", text, 16 * k)[0] & 0xFFF for k in range(len(text) // 16)]


def warp0_stages(main):
    """Instructions of the old blockReduce's stages only warp 0 runs (row_softmax_block): a
    segment between two BARs that branches within its first 12 instructions (`if (threadIdx.x <
    32)`, `== 0`) and moves no global memory."""
    bars = [i for i, o in enumerate(main) if o == BAR]
    n = 0
    for a, b in zip(bars, bars[1:]):
        k = next((j for j in range(a + 1, min(a + 13, b)) if main[j] == BRA), None)
        if k is not None and not any(main[j] in GLOBAL for j in range(a, b)):
            n += b - k - 1
    return n


def executed(ops):
    """(instructions a warp of a full row executes, MUFU instructions among them)."""
    main = ops[:max(i for i, o in enumerate(ops) if o == EXIT) + 1]
    skipped = 0
    for i, o in enumerate(main):
        if o == CALL:  # the slow-path call set-up the fast path branches over
            b = max(j for j in range(i) if main[j] == BRA)
            e = min(j for j in range(i, len(main)) if main[j] == BSYNC)
            skipped += e - b - 1
    bars = [i for i, o in enumerate(main) if o == BAR]
    for a, b in zip(bars, bars[1:]):  # warp 0's stage of a block reduction
        k = next((j for j in range(a + 1, min(a + 6, b)) if main[j] == BRA), None)
        if k is not None and b - a < 30:
            skipped += b - k - 1
    return len(main) - skipped, sum(1 for o in main if o == MUFU)


def main():
    counts = {}
    for name, text in sections(sys.argv[1]):
        if name.startswith(".text."):
            counts[name[len(".text."):]] = executed(opcodes(text))
    for kernel, small, large in (("row_softmax_warp", 32, 64), ("row_softmax_reg", 4, 8), ("row_softmax_smem", 16, 32)):
        a = next(v for k, v in counts.items() if kernel in k and f"ILi{small}E" in k)
        b = next(v for k, v in counts.items() if kernel in k and f"ILi{large}E" in k)
        per = (b[0] - a[0]) / (large - small)
        mufu = (b[1] - a[1]) / (large - small)
        print(f"{kernel}: {a[0]} executed at {small} values per thread, {b[0]} at {large}: "
              f"{per:.2f} per value ({mufu:.0f} MUFU), {a[0] - per * small:.0f} per row and thread")
    # The three-pass block kernel of releases before 2.4: its reductions' warp-0 stages are
    # longer (each warp-0 lane adds one warp's 32 values), so they are counted apart: what every
    # warp executes, and what warp 0 executes besides.
    code = {}
    for name, text in sections(sys.argv[1]):
        for per in (16, 32):
            if name.startswith(".text.") and "row_softmax_block" in name and f"ILi{per}E" in name:
                ops = opcodes(text)
                main_ = ops[:max(i for i, o in enumerate(ops) if o == EXIT) + 1]
                total, mufu = executed(ops)
                code[per] = (total - warp0_stages(main_), mufu, warp0_stages(main_))
    if code:
        (a, ma, w0), (b, mb, _) = code[16], code[32]
        per = (b - a) / 16
        print(f"row_softmax_block: every warp {a} at 16 values per thread, {b} at 32: {per:.2f} per value "
              f"({(mb - ma) / 16:.0f} MUFU), {a - per * 16:.0f} per row and thread; warp 0 {w0} more")


if __name__ == "__main__":
    main()
