#!/usr/bin/env bash
# What asking OPA costs per decision (issue 61): a cache hit and a miss against a real OPA server on loopback,
# side by side in one JMH run (io.sparkgate.bench.OpaBench). OPA is built from its Go module as the tests
# build it (target/tools/bin/opa, a few minutes the first time). About 1 minute after the builds.
#   bench/opa.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
src/test/tools/go-tool.sh opa
opa="$(realpath -m "${SPARKGATE_TOOLS:-target/tools}")/bin/opa"
echo "[bench] building the proxy and the benchmarks" >&2
mvn -B -q -DskipTests -DskipITs install
mvn -B -q -f bench/pom.xml package -DskipTests
cp="bench/target/classes:$(cat bench/target/classpath.txt)"
exec java -cp "$cp" -Dopa="$opa" -Dbundle=policies/opa/sparkgate/allow.rego org.openjdk.jmh.Main OpaBench "$@"
