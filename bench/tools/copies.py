#!/usr/bin/env python3
"""CPU ms per GB in the three bulk copies of every streamed byte, per recorded window (thirty-first round).

usage: bench/tools/copies.py RESULT.json STREAMS DIR   (DIR as given to perf-windows.sh)
perf names the JIT code from /tmp/perf-<pid>.map, which -XX:+DumpPerfMapAtExit writes when the proxy stops.
The copy stubs are the JIT's (a batch copied into its outgoing frame); _copy_to_iter and _copy_from_iter are
the kernel's copies on socket reads and writes. The window's CPU per GB comes from the result file.
"""
import glob, json, re, subprocess, sys

result, streams, directory = sys.argv[1], sys.argv[2], sys.argv[3]
figures = json.load(open(result))
mb_per_s = figures['rounds']['streaming_' + streams]
cpu_s_per_gb = figures['cpu_rounds']['streaming_' + streams]
for path in sorted(glob.glob(f'{directory}/x{streams}-sparkgate-*-r*.data')):
    name, rnd = re.search(r'(sparkgate-\w+)-r(\d+)\.data', path).groups()
    rnd = int(rnd)
    report = subprocess.run(['perf', 'report', '-i', path, '--stdio', '--no-children', '--sort', 'sym',
                             '-g', 'none', '--percent-limit', '0'], capture_output=True, text=True).stdout
    share = {}
    for line in report.splitlines():
        m = re.match(r'\s+([\d.]+)%\s+\[.\]\s+(.*)', line)
        if m:
            share[m.group(2).strip()] = share.get(m.group(2).strip(), 0) + float(m.group(1)) / 100
    ms = cpu_s_per_gb[name][rnd - 1] * 1000
    stubs = sum(v for k, v in share.items() if k.startswith('StubRoutines')) * ms
    to_iter = share.get('_copy_to_iter', 0) * ms
    from_iter = share.get('_copy_from_iter', 0) * ms
    print(f'{name:<15} r{rnd} {mb_per_s[name][rnd - 1]:6.0f} MB/s {ms:5.0f} ms/GB | copy stubs {stubs:4.0f}'
          f' _copy_to_iter {to_iter:4.0f} _copy_from_iter {from_iter:4.0f} | rest {ms - stubs - to_iter - from_iter:4.0f}')
