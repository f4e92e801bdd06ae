#!/usr/bin/env bash
# Installs FerretDB v1.24.2, the MongoDB-wire server the tests start (SQLite
# backend), to $(go env GOPATH)/bin/ferretdb or to the path given as $1.
# Idempotent: does nothing when a working v1.24.2 binary is already there.
set -euo pipefail

VERSION=v1.24.2
MODULE=github.com/FerretDB/FerretDB

command -v go >/dev/null || { echo "install-ferretdb: Go is required (https://go.dev/dl/)" >&2; exit 1; }

target="${1:-$(go env GOPATH | cut -d: -f1)/bin/ferretdb}"
# Capture first: grep -q closing the pipe early can SIGPIPE ferretdb, and pipefail would call that a failure.
is_ok() {
  [ -x "$1" ] || return 1
  local out
  out="$("$1" --version 2>/dev/null)" || return 1
  grep -q "version: $VERSION\$" <<<"$out"
}

candidates=("$target")
if [ $# -eq 0 ]; then
  candidates+=("$(command -v ferretdb || true)" "${HOME:-/root}/go/bin/ferretdb")
fi
for bin in "${candidates[@]}"; do
  if [ -n "$bin" ] && is_ok "$bin"; then
    echo "install-ferretdb: $bin is already $VERSION"
    exit 0
  fi
done

mkdir -p "$(dirname "$target")"
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"' EXIT

# 1. The documented way. It can fail: the proxy may refuse the module's version
# list, and a binary built this way lacks build/version/version.txt and panics.
echo "install-ferretdb: trying go install $MODULE/cmd/ferretdb@$VERSION"
if GOBIN="$work/bin" go install "$MODULE/cmd/ferretdb@$VERSION" && is_ok "$work/bin/ferretdb"; then
  mv "$work/bin/ferretdb" "$target"
  echo "install-ferretdb: installed $target"
  exit 0
fi

# 2. Fetch the module through a pinned requirement (no version list needed),
# then build a writable copy with its version file filled in.
echo "install-ferretdb: go install did not give a working binary; building from the module source"
mkdir -p "$work/fetch"
cat >"$work/fetch/go.mod" <<EOF
module fbuild

go 1.22

require $MODULE $VERSION
EOF
cat >"$work/fetch/tools.go" <<EOF
//go:build tools

package fbuild

import _ "$MODULE/cmd/ferretdb"
EOF
src="$(cd "$work/fetch" && GOFLAGS=-mod=mod go mod download -json "$MODULE" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
[ -n "$src" ] || src="$(go env GOMODCACHE)/github.com/!ferret!d!b/!ferret!d!b@$VERSION"
[ -d "$src" ] || { echo "install-ferretdb: module source not found at $src" >&2; exit 1; }

cp -R "$src" "$work/src"
chmod -R u+w "$work/src"
echo "$VERSION" >"$work/src/build/version/version.txt"
(cd "$work/src" && GOFLAGS=-mod=mod go build -o "$work/ferretdb" ./cmd/ferretdb)
is_ok "$work/ferretdb" || { echo "install-ferretdb: the built binary does not report $VERSION" >&2; exit 1; }
mv "$work/ferretdb" "$target"
echo "install-ferretdb: installed $target"
