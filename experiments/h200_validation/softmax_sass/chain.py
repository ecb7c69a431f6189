#!/usr/bin/python3
"""How one warp's instructions follow each other in the softmax analogs, from their sm_90 control codes.

Reads the kernels' .text sections from a cubin (as dynamic.py: no disassembler needed) and decodes
each instruction's control bits (from bit 105 of its 128: stall count 4 bits, yield 1, write
scoreboard 3, read scoreboard 3, wait mask 6, reuse 4; the layout Jia et al. documented for Volta,
"Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", arXiv 1804.06826, kept since).
It then walks the instructions a warp of a full row executes (dynamic.executed's path: without the
division's slow path) alone: an instruction issues `stall` cycles after the one before, and not
before the scoreboards in its wait mask are released; a variable-latency instruction releases its
write scoreboard `latency` cycles after it issued (global loads: `ldg`; the rest, MUFU, SHFL, FCHK,
shared memory, LDC, at VAR_LATENCY, an assumption: Hopper's figures are not measured here), its read
scoreboard READ_LATENCY cycles after.

For each kernel it prints, as kernels/standard.cpp tables them (RowKernelShape):
- round trips: how much one more cycle of global-load latency lengthens the warp, i.e. how many
  dependent DRAM round trips its loads make (the code waits for the first values before it issues
  the rest);
- chain: the cycles the warp needs with a one-cycle load latency, i.e. the rest of its row.
With --sketch it also runs a cycle sketch of one SM scheduler (one instruction per cycle from any
ready warp, the last issuing warp first) over the kernels.csv softmax configurations: W warps of
the same kernel starting together (the resident CTAs' warps on one of the 4 schedulers), CTA-wide
barriers over the CTA's warps there, global loads at SKETCH_LDG cycles, MUFU 8 cycles per warp
instruction on the scheduler's SFU lanes; it prints the cycles until all W warps finish against
the CTA lifetime kernels.csv implies (docs/accuracy.md §3). Every warp runs the whole code (the
block reductions' warp-0 stage too), so the block kernels' instructions are counted high.
Usage: chain.py KERNELS.cubin [--sketch]
"""
import re
import struct
import sys

import dynamic

LDG = 0x181  # LDG, global load (low 9 bits of its opcode; LDC, a constant-bank load, is 0x182)
EXIT, BRA, CALL, BSYNC = 0x14D, 0x147, 0x144, 0x141
VAR_LATENCY = 20   # cycles: MUFU, SHFL, FCHK, LDS, LDC results (assumed; the shared-memory order, 23-29 on A100)
READ_LATENCY = 4   # cycles until a store's or a shuffle's source registers are read


def decode(text):
    out = []
    for k in range(len(text) // 16):
        lo, hi = struct.unpack_from("<QQ", text, 16 * k)
        ctrl = hi >> 41
        out.append({"op": lo & 0x1FF, "stall": ctrl & 0xF, "wb": (ctrl >> 5) & 7, "rb": (ctrl >> 8) & 7,
                    "wait": (ctrl >> 11) & 0x3F})
    return out


def executed(ins):
    """The instructions up to the last EXIT without the division's slow-path call set-up."""
    main = ins[:max(i for i, x in enumerate(ins) if x["op"] == EXIT) + 1]
    keep = [True] * len(main)
    for i, x in enumerate(main):
        if x["op"] == CALL:
            b = max(j for j in range(i) if main[j]["op"] == BRA)
            e = min(j for j in range(i, len(main)) if main[j]["op"] == BSYNC)
            for j in range(b + 1, e):
                keep[j] = False
    return [x for x, k in zip(main, keep) if k]


def warp_cycles(ins, ldg):
    """Cycles one warp alone takes through `ins` with global loads of latency `ldg`."""
    t, release = 0, [0] * 8
    for x in ins:
        for b in range(6):
            if x["wait"] >> b & 1:
                t = max(t, release[b])
        if x["wb"] < 6:
            release[x["wb"]] = t + (ldg if x["op"] == LDG else VAR_LATENCY)
        if x["rb"] < 6:
            release[x["rb"]] = max(release[x["rb"]], t + READ_LATENCY)
        t += max(1, x["stall"])
    return t


SKETCH_LDG = 800  # cycles: the h200 preset's streaming HBM latency (655) plus L2 and queueing, assumed
BAR, MUFU = 0x11D, 0x108
# kernels.csv rows: (kernel, values per thread, warps per scheduler, warps of a CTA per scheduler,
# measured CTA lifetime in cycles from Little's law, docs/accuracy.md section 3)
SKETCH_ROWS = (("row_softmax_warp", 32, 10, 1, "15.6 k (N = 1024)"), ("row_softmax_warp", 64, 6, 1, "26.2 k (N = 2048)"),
               ("row_softmax_reg", 4, 16, 8, "6.3 k (N = 4096)"), ("row_softmax_reg", 8, 8, 8, "7.9 k (N = 8192)"),
               ("row_softmax_smem", 16, 16, 8, "14.4 k (N = 16384)"))


def sketch(ins, warps, cta_warps):
    n = len(ins)
    pc, ready, done = [0] * warps, [0] * warps, [None] * warps
    release = [[0] * 8 for _ in range(warps)]
    at_bar = [False] * warps
    t, last, sfu_free = 0, 0, 0
    while any(d is None for d in done):
        for w in sorted(range(warps), key=lambda v: (v != last, v)):
            if done[w] is not None or at_bar[w] or ready[w] > t:
                continue
            x = ins[pc[w]]
            if any(x["wait"] >> b & 1 and release[w][b] > t for b in range(6)):
                continue
            if x["op"] == MUFU and sfu_free > t:
                continue
            if x["op"] == MUFU:
                sfu_free = t + 8
            if x["wb"] < 6:
                release[w][x["wb"]] = t + (SKETCH_LDG if x["op"] == LDG else VAR_LATENCY)
            if x["rb"] < 6:
                release[w][x["rb"]] = max(release[w][x["rb"]], t + READ_LATENCY)
            ready[w] = t + max(1, x["stall"])
            pc[w] += 1
            if x["op"] == BAR:
                at_bar[w] = True
                mates = [v for v in range(warps) if v // cta_warps == w // cta_warps]
                if all(at_bar[v] for v in mates):
                    for v in mates:
                        at_bar[v] = False
                        ready[v] = max(ready[v], t + VAR_LATENCY)
            if pc[w] >= n:
                done[w] = t
            last = w
            break
        t += 1
    return max(done)


def main():
    rows, code = [], {}
    for name, text in dynamic.sections(sys.argv[1]):
        m = re.match(r"\.text\._Z\d+(row_softmax_\w+?)ILi(\d+)E", name)
        if not m:
            continue
        ins = executed(decode(text))
        code[(m.group(1), int(m.group(2)))] = ins
        a, b = warp_cycles(ins, 1000), warp_cycles(ins, 2000)
        rows.append((m.group(1), int(m.group(2)), len(ins), (b - a) / 1000, warp_cycles(ins, 1)))
    print("kernel               values/thread  instructions  round trips  chain (cycles)")
    for kernel, per, n, trips, chain in sorted(rows):
        print(f"{kernel:20s} {per:13d} {n:13d} {trips:12.0f} {chain:15d}")
    if "--sketch" in sys.argv[2:]:
        print("sketch: one scheduler, W warps in step; cycles until all finish against the measured CTA lifetime")
        for kernel, per, warps, cta_warps, measured in SKETCH_ROWS:
            cycles = sketch(code[(kernel, per)], warps, cta_warps)
            print(f"{kernel:20s} {per:3d} values/thread  W = {warps:2d}: {cycles / 1000:5.1f} k cycles  measured {measured}")


if __name__ == "__main__":
    main()
