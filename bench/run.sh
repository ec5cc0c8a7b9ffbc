#!/usr/bin/env bash
# The benchmark suite (issue 7) in one command. See bench/README.md.
#   bench/run.sh            full run (about an hour: the 1 GiB slow reader alone takes 17 minutes)
#   bench/run.sh --quick    smoke run, a few seconds per scenario (about 4 minutes)
# Every other option is passed to the runner (io.sparkgate.bench.BenchRunner); bench/README.md lists them.
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

cp="bench/target/classes:$(cat bench/target/classpath.txt)"
exec java -Xms1g -Xmx2g -cp "$cp" io.sparkgate.bench.BenchRunner --jar target/sparkgate.jar --out bench/results "$@"
