#!/usr/bin/env bash
# Engines on demand (issue 60): a new principal's time to first result on a running Spark Connect server, on
# a warm engine and on a cold one, and the proxy's heap per placed engine. Real Spark from a pyspark wheel's
# distribution (the test suite's PySpark 4.0.5 environment, or --spark-home DIR). About 5 minutes.
#   bench/engines.sh [--rounds 3] [--spark-home DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
home="$HOME/.cache/sparkgate/compat-venv/pyspark-connect-4.0.5/lib/python3.11/site-packages/pyspark"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --spark-home) home="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ ! -x "$home/bin/spark-submit" ]; then
  echo "no Spark distribution at $home: run the test suite once (it installs PySpark 4.0.5), or pass --spark-home" >&2
  exit 1
fi
echo "[bench] building the proxy and the benchmarks" >&2
mvn -B -q -DskipTests -DskipITs install
mvn -B -q -f bench/pom.xml package -DskipTests
cp="bench/target/classes:$(cat bench/target/classpath.txt)"
exec java -Xms512m -Xmx1g -cp "$cp" io.sparkgate.bench.EngineStartup --spark-home "$home" --out bench/results "${args[@]}"
