#!/usr/bin/env python3
"""Joins the cross-core canary (bench/tools/xcore.c) to a bench run's streaming windows (thirty-second round).

For every streaming window in the bench's log it takes the canary's samples from the end of the window's 5 s
warm-up to the window's end, and prints the window's MB/s and CPU s/GB (from the result JSON) beside the
share of samples in which the two vCPUs were near each other (a round trip under NEAR_NS) and the median
cross-core copy cost; then, per streams and endpoint, the median MB/s of the near and of the far windows.
  bench/tools/xcore-windows.py /tmp/bench.log /tmp/xcore.log bench/results/<run>.json
"""
import json
import re
import statistics
import sys
from datetime import datetime, timedelta

NEAR_NS = 300  # the round trip was about 150 ns or about 500 ns, nothing between (thirty-second round)
WARMUP = timedelta(seconds=5)


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
        near = sum(1 for s in inside if s[1] < NEAR_NS) / len(inside)
        rows.append((streams, name, rnd, mbs, cpu, near, statistics.median(s[2] for s in inside), len(inside)))
    print(f"{'streams':>7} {'endpoint':<16} {'round':>5} {'MB/s':>7} {'CPU s/GB':>8} {'near':>5} {'xcopy ns/KiB':>12} {'samples':>7}")
    for r in rows:
        cpu = f"{r[4]:.2f}" if r[4] is not None else "-"
        print(f"{r[0]:>7} {r[1]:<16} {r[2]:>5} {r[3]:>7.0f} {cpu:>8} {r[5]:>5.0%} {r[6]:>12.1f} {r[7]:>7}")
    print("\nmedian MB/s of the windows with the vCPUs near (near >= 80%) and far (near <= 20%)")
    for streams in sorted({r[0] for r in rows}):
        for name in sorted({r[1] for r in rows if r[0] == streams}):
            near = [r[3] for r in rows if r[0] == streams and r[1] == name and r[5] >= 0.8]
            far = [r[3] for r in rows if r[0] == streams and r[1] == name and r[5] <= 0.2]
            fmt = lambda v: f"{statistics.median(v):.0f} ({len(v)})" if v else "-"
            print(f"  x{streams} {name:<16} near {fmt(near):>10}   far {fmt(far):>10}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
