#!/usr/bin/env bash
# Follows a running bench's log and, for each 4- and 16-stream window of a Sparkgate, records that proxy's
# CPU samples for the 10 s measurement after the 5 s warm-up, into DIR/x<streams>-<endpoint>-r<round>.data.
# Run the bench with --proxy-jvm -XX:+UnlockDiagnosticVMOptions --proxy-jvm -XX:+DumpPerfMapAtExit so that
# perf can name the JIT's code; then bench/tools/copies.py summarises the recordings (thirty-first round).
#   bench/tools/perf-windows.sh /tmp/bench.log /tmp/prof &   bench/run.sh --only stream ... > /tmp/bench.log
set -euo pipefail
log=$1 dir=$2
mkdir -p "$dir"
tail -n0 -F "$log" | while read -r line; do
  if [[ $line =~ streaming\ x(4|16):\ (sparkgate-[a-z]+)\ \(round\ ([0-9]+) ]]; then
    x=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]} r=${BASH_REMATCH[3]}
    pid=$(pgrep -f -- "/$name/" | head -1) || continue
    (sleep 5; perf record -q -e cpu-clock -F 499 -g -p "$pid" -o "$dir/x$x-$name-r$r.data" -- sleep 10 >/dev/null 2>&1) &
  fi
done
