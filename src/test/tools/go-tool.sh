#!/usr/bin/env bash
# Builds the real servers that end-to-end tests run (OPA, Jaeger) from their Go modules with the machine's
# Go, as go-tools.txt lists them, into target/tools/bin (SPARKGATE_TOOLS moves it), once per version: a stamp
# file names what was built. The tests call it through testing/GoTools; .ci/run starts it early in the
# background, so that the minutes a build takes on a machine without Go's caches overlap the unit tests. A
# lock per tool makes a second caller wait for the first build instead of starting another.
#
# usage: go-tool.sh NAME...   (--all: every tool listed)
set -euo pipefail
cd "$(dirname "$0")/../../.."
list=src/test/tools/go-tools.txt
tools=$(realpath -m "${SPARKGATE_TOOLS:-target/tools}")
bin=$tools/bin
mkdir -p "$bin"
if [ "${1:-}" = --all ]; then
  set -- $(grep -v '^#' "$list" | awk 'NF { print $1 }')
fi
[ $# -gt 0 ] || { echo "usage: go-tool.sh NAME... | --all" >&2; exit 2; }

build() {
  local name=$1 pkg version mode
  read -r _ pkg version mode < <(grep -v '^#' "$list" | awk -v n="$name" '$1 == n') || true
  if [ -z "${pkg:-}" ]; then
    echo "go-tool.sh: no tool '$name' in $list" >&2
    return 2
  fi
  local wanted="$pkg@$version"
  exec 9>"$bin/$name.lock"
  flock 9
  if [ -x "$bin/$name" ] && [ "$(cat "$bin/$name.version" 2>/dev/null)" = "$wanted" ]; then
    return 0
  fi
  local start src
  start=$(date +%s)
  case "$mode" in
    install) GOBIN=$bin go install "$wanted" ;;
    module)
      src=$tools/src/$name
      rm -rf "$src"
      mkdir -p "$src"
      (cd "$src" && go mod init "sparkgate-tools/$name" && go get -tool "$wanted" &&
        go build -o "$bin/$name" "$pkg")
      ;;
    *) echo "go-tool.sh: how must be install or module, got '$mode' for $name" >&2; return 2 ;;
  esac
  echo "$wanted" >"$bin/$name.version"
  echo "built $name $version in $(($(date +%s) - start)) s"
  exec 9>&-
}

for name in "$@"; do
  build "$name"
done
