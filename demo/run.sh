#!/usr/bin/env bash
# Sparkgate demo (README command 1). Needs only JDK 17 and Maven.
#
#   demo/run.sh                 # Spark Connect on 15002, Sparkgate (TLS) on 15003
#   SPARK_PORT=16002 PROXY_PORT=16003 METRICS_PORT=19464 demo/run.sh
#
# Builds Sparkgate, creates dev certificates in certs/dev (if absent), starts a real local Spark Connect 4.0
# server (plaintext, 127.0.0.1 only) and Sparkgate in front of it (TLS), runs a short session with the real
# Spark JVM client through the proxy, prints how to connect PySpark and the JVM client, then serves until
# Ctrl-C. Both processes are stopped on Ctrl-C and on any failure. Logs: target/demo/*.log.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

SPARK_PORT="${SPARK_PORT:-15002}"
PROXY_PORT="${PROXY_PORT:-15003}"
METRICS_PORT="${METRICS_PORT:-9464}"
demo_dir="$root/target/demo"
spark_log="$demo_dir/spark-server.log"
proxy_log="$demo_dir/sparkgate.log"
spark_pid=""
proxy_pid=""

say() { printf '\n==> %s\n' "$*"; }
die() { printf '\nERROR: %s\n' "$*" >&2; exit 1; }

show_log() { # file: print its tail
  if [[ -f "$1" ]]; then
    printf -- '--- last lines of %s ---\n' "$1" >&2
    tail -n 40 "$1" >&2
    printf -- '---\n' >&2
  fi
}

stop() { # pid name: SIGTERM, then SIGKILL after 20 s
  local pid="$1" name="$2"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  echo "Stopping $name (pid $pid)..."
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    sleep 0.5
  done
  echo "$name did not stop in 20 s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop "$proxy_pid" "Sparkgate"
  stop "$spark_pid" "the Spark Connect server"
  exit "$status"
}
trap cleanup EXIT
trap 'echo; exit 130' INT
trap 'exit 143' TERM

# Maven 3.8 with -q still prints bare colour-reset codes when stdout is not a terminal; keep the output clean.
quiet_mvn() { mvn -B -q "$@" 2>&1 | sed -e $'s/\x1b\\[[0-9;]*m//g' -e '/^[[:space:]]*$/d'; }

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

await_port() { # port pid name log timeout_seconds
  local port="$1" pid="$2" name="$3" log="$4" timeout="$5" waited=0
  until listening "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      show_log "$log"
      die "$name exited before it listened on port $port (log: $log)"
    fi
    if (( waited >= timeout * 2 )); then
      show_log "$log"
      die "$name did not listen on port $port within ${timeout}s (log: $log)"
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
}

command -v java >/dev/null || die "java not found: install JDK 17"
command -v mvn >/dev/null || die "mvn not found: install Maven"
for port in "$SPARK_PORT" "$PROXY_PORT" "$METRICS_PORT"; do
  if listening "$port"; then
    die "port $port is already in use; choose others with SPARK_PORT=... PROXY_PORT=... METRICS_PORT=... demo/run.sh"
  fi
done
mkdir -p "$demo_dir"

# --- 1. build ------------------------------------------------------------------------------------------------
say "Building Sparkgate (mvn -B -q -DskipTests package)"
quiet_mvn -DskipTests package

say "Resolving the Spark Connect 4.0 server (spark-server/pom.xml) and the demo client (demo/pom.xml)"
quiet_mvn -f spark-server/pom.xml dependency:build-classpath -Dmdep.outputFile="$root/target/spark-server.classpath"
quiet_mvn -f demo/pom.xml package dependency:build-classpath -Dmdep.outputFile="$demo_dir/client.classpath"

# --- 2. certificates -----------------------------------------------------------------------------------------
if [[ -f certs/dev/server.pem && -f certs/dev/server.key && -f certs/dev/ca.pem && -f certs/dev/truststore.p12 ]]
then
  say "Using the existing dev certificates in certs/dev"
else
  say "Creating dev certificates in certs/dev"
  java -jar target/sparkgate.jar dev-certs --out certs/dev
fi

# --- 3. the Spark Connect server -----------------------------------------------------------------------------
# The same JVM flags as the end-to-end tests (spark-server/jvm.options, one per line).
mapfile -t spark_jvm_options < <(grep -v -E '^[[:space:]]*(#|$)' spark-server/jvm.options)
say "Starting a Spark Connect 4.0 server on 127.0.0.1:$SPARK_PORT (log: target/demo/spark-server.log)"
java "${spark_jvm_options[@]}" \
  -Djava.io.tmpdir="$demo_dir" \
  -Dspark.master='local[2]' \
  -Dspark.ui.enabled=false \
  -Dspark.sql.warehouse.dir="$demo_dir/warehouse" \
  -Dspark.local.dir="$demo_dir/local" \
  -Dspark.connect.grpc.binding.address=127.0.0.1 \
  -Dspark.connect.grpc.binding.port="$SPARK_PORT" \
  -cp "$(cat "$root/target/spark-server.classpath")" \
  org.apache.spark.sql.connect.service.SparkConnectServer >"$spark_log" 2>&1 &
spark_pid=$!
await_port "$SPARK_PORT" "$spark_pid" "The Spark Connect server" "$spark_log" 180
echo "Spark Connect server listening (pid $spark_pid)"

# --- 4. Sparkgate --------------------------------------------------------------------------------------------
config="proxy/examples/demo.yaml"
if [[ "$SPARK_PORT" != 15002 || "$PROXY_PORT" != 15003 || "$METRICS_PORT" != 9464 ]]; then
  # Same depth below the root as proxy/examples/, so the config's ../../certs/dev paths still resolve.
  config="target/demo/demo.yaml"
  sed -e "s/^\(  port:\) 15003\$/\1 $PROXY_PORT/" -e "s/localhost:15002\$/localhost:$SPARK_PORT/" \
    -e "s/^\(  port:\) 9464\$/\1 $METRICS_PORT/" proxy/examples/demo.yaml >"$config"
fi
say "Starting Sparkgate on 127.0.0.1:$PROXY_PORT (TLS) -> localhost:$SPARK_PORT (config: $config, log: target/demo/sparkgate.log)"
# The collector the deploy files use (docs/operations.md, "JVM settings").
java -XX:+UseParallelGC -XX:+UseTransparentHugePages -jar target/sparkgate.jar serve --config "$config" >"$proxy_log" 2>&1 &
proxy_pid=$!
await_port "$PROXY_PORT" "$proxy_pid" "Sparkgate" "$proxy_log" 60
echo "Sparkgate listening (pid $proxy_pid)"

# --- 5. a real client session through TLS --------------------------------------------------------------------
url="sc://localhost:$PROXY_PORT/;use_ssl=true"
say "A short session with the real Spark Connect JVM client through Sparkgate (TLS, dev CA)"
if ! java --add-opens=java.base/java.nio=ALL-UNNAMED \
    -Djavax.net.ssl.trustStore=certs/dev/truststore.p12 -Djavax.net.ssl.trustStorePassword=changeit \
    -cp "demo/target/classes:$(cat "$demo_dir/client.classpath")" \
    io.sparkgate.demo.DemoClient "$url"; then
  show_log "$proxy_log"
  show_log "$spark_log"
  die "the demo client session failed"
fi

# --- 6. keep serving -----------------------------------------------------------------------------------------
cat <<EOF

==> Sparkgate is serving Spark Connect over TLS at

      $url

    PySpark (pip install "pyspark[connect]==4.0.0"):
      GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=$root/certs/dev/ca.pem \\
      SPARK_REMOTE="$url" pyspark
    or in Python: SparkSession.builder.remote("$url").getOrCreate()
    (with GRPC_DEFAULT_SSL_ROOTS_FILE_PATH set as above, so gRPC trusts the dev CA)

    Spark JVM client (spark-connect-client-jvm_2.13:4.0.0):
      java --add-opens=java.base/java.nio=ALL-UNNAMED \\
           -Djavax.net.ssl.trustStore=$root/certs/dev/truststore.p12 -Djavax.net.ssl.trustStorePassword=changeit ...
      SparkSession.builder().remote("$url").getOrCreate()

    Logs: target/demo/sparkgate.log, target/demo/spark-server.log
    Metrics (Prometheus): curl -s http://127.0.0.1:$METRICS_PORT/metrics | grep ^sparkgate_
    Audit log: target/demo/audit.jsonl (check it: java -jar target/sparkgate.jar audit verify target/demo/audit.jsonl)
    Policy: policies/shared-server.yaml (try spark.sql("SELECT reflect('java.lang.System','getenv')") to see a refusal)
    Press Ctrl-C to stop Sparkgate and the Spark Connect server.
EOF

# Returns when either process exits (then report it) or when a signal's trap runs.
set +e
wait -n "$proxy_pid" "$spark_pid"
set -e
if ! kill -0 "$proxy_pid" 2>/dev/null; then
  show_log "$proxy_log"
  die "Sparkgate exited unexpectedly (log: $proxy_log)"
fi
show_log "$spark_log"
die "the Spark Connect server exited unexpectedly (log: $spark_log)"
