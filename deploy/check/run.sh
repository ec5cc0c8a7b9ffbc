#!/usr/bin/env bash
# Checks the Kubernetes deployment with the real tools: helm lint and helm template on the chart (its
# defaults plus anonymous access or a JWT IdP, and ci/full-values.yaml), then every rendered object and the
# plain manifests against the Kubernetes API schema, offline and strictly (check, in this directory).
# Negative cases prove the guards work: the checker must reject every file in testdata/, and the chart must
# refuse its bare defaults (no authentication method) and values that would break a drain, expose the admin
# port without a token or keep the kubelet from probing it. NOTES.txt warns exactly when anonymous is on.
#
# helm and the checker are built from source with the Go toolchain on first use (helm takes minutes) into
# target/tools/bin (SPARKGATE_TOOLS moves it); Go's module and build caches make later builds quick.
# Prints one line per object; the rendered manifests and each rendered sparkgate.yaml are left in
# target/deploy-check/. Exit status 0 when everything passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
bin=${SPARKGATE_TOOLS:-$root/target/tools}/bin
out=target/deploy-check
chart=deploy/helm/sparkgate
mkdir -p "$bin"
rm -rf "$out"
mkdir -p "$out"

# helm is built like the tests' other Go tools (src/test/tools/go-tools.txt holds its version), so that
# .ci/run can start the build early, in the background, and this waits for it.
start=$(date +%s)
src/test/tools/go-tool.sh helm
echo "helm ready in $(($(date +%s) - start)) s"
# Always rebuilt (a no-op from Go's cache when nothing changed), so that edits to the checker take effect.
start=$(date +%s)
(cd deploy/check && nice -n 19 go build -buildvcs=false -o "$bin/k8s-check" .)
echo "checker ready in $(($(date +%s) - start)) s"
helm=$bin/helm
check=$bin/k8s-check

# The chart's defaults configure no authentication, so they render nothing (checked below); "default" here
# is the defaults plus the one value that opts in to anonymous access, "jwt" the defaults plus a JWT IdP.
anonymous=(--set config.auth.anonymous=true)
jwt=(--set config.auth.jwt.oidc_discovery_url=https://idp.example.com/realms/spark/.well-known/openid-configuration
  --set config.auth.jwt.issuer=https://idp.example.com/realms/spark --set config.auth.jwt.audience=sparkgate)
"$helm" lint --strict "$chart" "${anonymous[@]}"
"$helm" lint --strict "$chart" -f "$chart/ci/full-values.yaml"
"$helm" template sparkgate "$chart" --namespace sparkgate "${anonymous[@]}" >"$out/chart-default.yaml"
"$helm" template sparkgate "$chart" --namespace sparkgate "${jwt[@]}" >"$out/chart-jwt.yaml"
"$helm" template sparkgate "$chart" --namespace sparkgate -f "$chart/ci/full-values.yaml" \
  >"$out/chart-full.yaml"

# helm template leaves NOTES.txt out; a client-side dry-run install renders it too, without a cluster. Only
# an install with anonymous access on carries the warning.
install() {
  local name=$1 warnings=$2
  shift 2
  "$helm" install sparkgate "$chart" --namespace sparkgate --dry-run=client "$@" >"$out/install-$name.txt"
  local found
  found=$(grep -c '^WARNING: ANONYMOUS ACCESS IS ON' "$out/install-$name.txt" || true)
  if [ "$found" != "$warnings" ]; then
    echo "NOTES.txt of install $name has $found anonymous warnings, not $warnings: $out/install-$name.txt" >&2
    exit 1
  fi
  echo "notes: $name: $found anonymous warning"
}
install anonymous 1 "${anonymous[@]}"
install fallback 1 "${jwt[@]}" --set config.auth.anonymous=fallback
install jwt 0 "${jwt[@]}"
install full 0 -f "$chart/ci/full-values.yaml"

"$check" -write-config "$out/config" \
  "$out/chart-default.yaml" "$out/chart-jwt.yaml" "$out/chart-full.yaml" deploy/kubernetes/sparkgate.yaml

# The checker itself: each file in testdata/ holds one mistake it must catch.
for bad in deploy/check/testdata/*.yaml; do
  if "$check" "$bad" >"$out/negative.txt" 2>&1; then
    echo "the checker accepted $bad, which holds a mistake:" >&2
    cat "$out/negative.txt" >&2
    exit 1
  fi
  echo "negative: $(head -1 "$out/negative.txt")"
done

# The chart's own guards: values without an authentication method, or that would break a drain, leave the
# admin port open or keep the kubelet from probing it must not render.
refuse() {
  local why=$1
  shift
  if "$helm" template sparkgate "$chart" "$@" >"$out/negative.txt" 2>&1; then
    echo "the chart rendered values it must refuse ($why): $*" >&2
    exit 1
  fi
  echo "negative: chart refuses $why: $(grep -o 'error.*' "$out/negative.txt" | head -1)"
}
refuse "the defaults, which configure no authentication"
# One message, naming the values to set (helm stops at the first template that fails).
if [ "$(grep -c 'config.auth' "$out/negative.txt")" != 1 ]; then
  echo "the chart's defaults must fail with one message about config.auth:" >&2
  cat "$out/negative.txt" >&2
  exit 1
fi
refuse "anonymous: true beside another method" "${jwt[@]}" --set config.auth.anonymous=true
refuse "a grace period shorter than the drain" "${anonymous[@]}" --set terminationGracePeriodSeconds=20
refuse "an admin port beyond loopback without a token" "${anonymous[@]}" --set secrets.adminToken=
refuse "an admin port the kubelet cannot probe" "${anonymous[@]}" --set config.admin.address=127.0.0.1
refuse "an admin client CA the chart does not mount" "${anonymous[@]}" --set secrets.adminTls=sparkgate-admin-tls \
  --set config.admin.tls.client_ca_file=/etc/sparkgate/admin-tls/ca.crt

echo "deploy checks passed"
