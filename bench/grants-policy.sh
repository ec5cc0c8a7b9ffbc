#!/usr/bin/env bash
# Writes a policy with N grants to stdout: the shipped shared-server rules plus a data_access section with one
# team namespace per grant (in the session catalog and in Iceberg), a scratch namespace per principal, a
# catalog-wide audit grant and a path grant. The benchmark's principal ("bench", no groups) holds the scratch
# grant. Used for the grants' end-to-end figure (bench/README.md, "Grants"):
#   bench/grants-policy.sh 10000 > /tmp/grants-10000.yaml
#   bench/run.sh ... --policy /tmp/grants-10000.yaml --baseline-jar target/sparkgate.jar --baseline-full
set -euo pipefail
n=${1:?usage: bench/grants-policy.sh N}
root=$(cd "$(dirname "$0")/.." && pwd)
cat <<YAML
default: allow
rules:
  - include: $root/policies/shared-server.yaml
data_access:
  default: deny
  grants:
    - {name: scratch, to: {principals: ['*']}, tables: ['spark_catalog.scratch_{principal}.*'], privileges: [all]}
    - {name: audit-all, to: {groups: [auditors]}, tables: ['*.*.*'], privileges: [select]}
    - {name: bucket, to: {groups: [team0]}, paths: ['s3a://team0/*'], privileges: [select]}
YAML
for ((i = 3; i < n; i++)); do
  echo "    - {name: team-$i, to: {groups: [team$i]}, tables: ['spark_catalog.team$i.*', 'iceberg.team$i.*'], privileges: [select, modify]}"
done
