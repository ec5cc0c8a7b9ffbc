#!/usr/bin/env bash
# Follows a running bench's log and keeps FILE present during the streaming windows only, so that a canary
# gated on it (bench/tools/xcore.c) runs beside the streaming scenarios and stays out of the latency ones.
#   bench/tools/gate-streaming.sh /tmp/bench.log /tmp/active &   /tmp/xcore /tmp/active > /tmp/xcore.log &
set -euo pipefail
log=$1 gate=$2
rm -f "$gate"
tail -n0 -F "$log" | while read -r line; do
  if [[ $line =~ \]\ streaming\ x ]]; then
    touch "$gate"
  elif [[ $line =~ \]\ [A-Za-z] ]]; then
    rm -f "$gate"
  fi
done
