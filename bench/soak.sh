#!/usr/bin/env bash
# A bounded soak run (issue 49): mixed traffic through one proxy for a set time (default one hour), the
# proxy's heap, direct memory, threads and file descriptors sampled every 10 s, and the slope of each per hour
# written to bench/results/soak-<time>.json. Not part of CI. See bench/README.md.
#   bench/soak.sh                               one hour
#   bench/soak.sh --duration 10m                ten minutes
#   bench/soak.sh --no-build --duration 10m     without building first (target/sparkgate.jar and bench/ built)
# Other options go to io.sparkgate.bench.Soak: --sample 10s, --workers 4, --pause-ms 5, --jar, --out.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
build=1
args=()
for a in "$@"; do
  if [ "$a" = "--no-build" ]; then build=0; else args+=("$a"); fi
done
if [ "$build" = 1 ]; then
  echo "[soak] building the proxy and the benchmarks" >&2
  mvn -B -q -DskipTests -DskipITs install
  mvn -B -q -f bench/pom.xml package -DskipTests
fi
cp="bench/target/classes:$(cat bench/target/classpath.txt)"
exec nice -n "${SOAK_NICE:-0}" java -Xms256m -Xmx1g -cp "$cp" io.sparkgate.bench.Soak --jar target/sparkgate.jar --out bench/results "${args[@]}"
