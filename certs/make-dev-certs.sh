#!/usr/bin/env bash
# Generates development TLS material into certs/dev (git-ignored). Extra arguments go to the
# dev-certs command, e.g.: certs/make-dev-certs.sh --key-type ec --client-name alice
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [[ ! -f target/sparkgate.jar ]]; then
  echo "target/sparkgate.jar missing; building it (mvn -B -q -DskipTests package)..." >&2
  mvn -B -q -DskipTests package
fi

# DevCertsCommand has its own main so this works regardless of how Main wires subcommands.
exec java -cp target/sparkgate.jar io.sparkgate.cli.DevCertsCommand --out certs/dev "$@"
