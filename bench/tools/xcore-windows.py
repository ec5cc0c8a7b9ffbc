#!/usr/bin/env python3
"""Joins the cross-core canary (bench/tools/xcore.c) to a bench run's streaming windows (thirty-second round).

For every streaming window in the bench's log it takes the canary's samples from the end of the window's 5 s
warm-up to the window's end, and prints the window's MB/s and CPU s/GB (from the result JSON) beside the
share of samples in each vCPU placement (as CoreCanary classifies them: one core, shared L3, apart) and the
median cross-core copy cost; then, per streams and endpoint, the median MB/s of the windows in each placement.
  bench/tools/xcore-windows.py /tmp/bench.log /tmp/xcore.log bench/results/<run>.json
"""
import json
import re
import statistics
import sys
from datetime import datetime, timedelta

SHARED_CACHE_NS = 300  # round trips were about 110, 150 or 500 ns (thirty-second round)
SIBLINGS_NS_PER_KIB = 12  # cross-core copies about 10, 15 or 31 ns/KiB
DOMINANT = 0.8  # a window is in one placement when at least this share of its samples were (CoreCanary)
PLACEMENTS = ("one core", "shared L3", "apart")
WARMUP = timedelta(seconds=5)


def placement(rtt, xcopy):
    if rtt >= SHARED_CACHE_NS:
        return "apart"
    return "one core" if xcopy < SIBLINGS_NS_PER_KIB else "shared L3"


def clock(s):
    return datetime.strptime(s, "%H:%M:%S")


def main(log_path, canary_path, result_path):
    lines = [l.rstrip("\n") for l in open(log_path)]
    stamped = [(clock(m.group(1)), m.group(2)) for l in lines if (m := re.match(r"\[bench (\d\d:\d\d:\d\d)\] (.*)", l))]
    samples = []
    for l in open(canary_path):
        m = re.match(r"T (\S+) rtt_ns_p10=\S+ rtt_ns_p50=(\S+) xcopy_ns_per_KiB=(\S+)", l)
        if m:
            samples.append((clock(m.group(1)), float(m.group(2)), float(m.group(3))))
    result = json.load(open(result_path))
    rows = []
    for i, (start, text) in enumerate(stamped):
        m = re.match(r"streaming x(\d+): (\S+) \(round (\d+) of \d+\)", text)
        if not m:
            continue
        streams, name, rnd = int(m.group(1)), m.group(2), int(m.group(3))
        end = next((t for t, x in stamped[i + 1:] if not x.startswith(" ")), None)
        end = end or stamped[min(i + 1, len(stamped) - 1)][0]
        inside = [s for s in samples if start + WARMUP <= s[0] <= end]
        if not inside:
            continue
        key = f"streaming_{streams}"
        mbs = result["rounds"][key][name][rnd - 1]
        cpu = result["cpu_rounds"].get(key, {}).get(name, [None] * rnd)[rnd - 1]
        shares = [sum(1 for s in inside if placement(s[1], s[2]) == p) / len(inside) for p in PLACEMENTS]
        tag = next((p for p, share in zip(PLACEMENTS, shares) if share >= DOMINANT), "mixed")
        rows.append((streams, name, rnd, mbs, cpu, tag, statistics.median(s[2] for s in inside), len(inside)))
    print(f"{'streams':>7} {'endpoint':<16} {'round':>5} {'MB/s':>7} {'CPU s/GB':>8} {'vCPUs':>9} {'xcopy ns/KiB':>12} {'samples':>7}")
    for r in rows:
        cpu = f"{r[4]:.2f}" if r[4] is not None else "-"
        print(f"{r[0]:>7} {r[1]:<16} {r[2]:>5} {r[3]:>7.0f} {cpu:>8} {r[5]:>9} {r[6]:>12.1f} {r[7]:>7}")
    print("\nmedian MB/s of the windows in each placement (and how many)")
    for streams in sorted({r[0] for r in rows}):
        for name in sorted({r[1] for r in rows if r[0] == streams}):
            cells = []
            for p in PLACEMENTS:
                v = [r[3] for r in rows if r[0] == streams and r[1] == name and r[5] == p]
                cells.append(f"{p} {statistics.median(v):.0f} ({len(v)})" if v else f"{p} -")
            print(f"  x{streams} {name:<16} " + "   ".join(cells))


if __name__ == "__main__":
    main(*sys.argv[1:4])
