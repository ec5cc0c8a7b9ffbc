#!/usr/bin/env bash
# The benchmark suite (issue 7) in one command. See bench/README.md.
#   bench/run.sh            full run (about an hour: the 1 GiB slow reader alone takes 17 minutes)
#   bench/run.sh --quick    smoke run, a few seconds per scenario (about 4 minutes)
# Other options are passed to the runner (bench/README.md): --no-nginx, --no-jmh, --token-file FILE,
# --only NAMES, --measure S, --warmup S, --rounds N, --proxy-warmup S, --frame-relay, --slow-total-mib N,
# --slow-rate-kib N, --sessions N, --proxy-jvm OPT, --baseline-jar JAR with --baseline-full,
# --baseline-features LIST, --baseline-jvm OPT, --baseline-audit KEY=VALUE, --listen KEY=VALUE or
# --baseline-listen KEY=VALUE.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# nginx baselines: Debian's nginx and its stream module, installed when we can (root) and missing.
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ] || [ ! -e /usr/lib/nginx/modules/ngx_stream_module.so ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[bench] installing nginx and libnginx-mod-stream" >&2
    (apt-get install -y nginx libnginx-mod-stream || { apt-get update && apt-get install -y nginx libnginx-mod-stream; }) >/dev/null \
      || echo "[bench] could not install nginx: the nginx baselines will be skipped" >&2
  else
    echo "[bench] nginx not installed and cannot install it: the nginx baselines will be skipped" >&2
  fi
fi
export PATH="$PATH:/usr/sbin"

# The proxy (target/sparkgate.jar) and its artifact for the bench project, then the bench project itself.
echo "[bench] building the proxy and the benchmarks" >&2
mvn -B -q -DskipTests -DskipITs install
mvn -B -q -f bench/pom.xml package
# The cross-core canary tags each streaming round with where the host had put the two vCPUs (CoreCanary).
if command -v gcc >/dev/null 2>&1; then
  gcc -O2 -pthread -o bench/target/xcore bench/tools/xcore.c || echo "[bench] could not build the cross-core canary" >&2
else
  echo "[bench] gcc not installed: no cross-core canary, streaming rounds not tagged" >&2
fi

cp="bench/target/classes:$(cat bench/target/classpath.txt)"
exec java -Xms1g -Xmx2g -cp "$cp" io.sparkgate.bench.BenchRunner --jar target/sparkgate.jar --out bench/results "$@"
