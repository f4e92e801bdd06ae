#!/usr/bin/env bash
# Installs one Go command-line tool at an exact version to $(go env GOPATH)/bin with `go install`
# from the Go module proxy (the module proxy here serves exact versions only, never @latest):
#   bash scripts/go-install-tool.sh NAME MODULE/PATH/TO/CMD VERSION VERSION-FLAG
# Idempotent: does nothing when a working NAME (`NAME VERSION-FLAG` succeeds, any version) is
# already on PATH or in $(go env GOPATH)/bin. A binary built by `go install` reports a dev
# version; `go version -m` shows the module version, printed here.
set -euo pipefail

name=$1 package=$2 version=$3 version_flag=$4

command -v go >/dev/null || { echo "install-$name: Go is required (https://go.dev/dl/)" >&2; exit 1; }

gobin="$(go env GOPATH | cut -d: -f1)/bin"
for bin in "$(command -v "$name" || true)" "$gobin/$name"; do
  # Capture first: pipefail and an early-closing grep do not mix.
  if [ -n "$bin" ] && [ -x "$bin" ] && out="$("$bin" "$version_flag" 2>&1)"; then
    mod="$(go version -m "$bin" 2>/dev/null | awk '$1 == "mod" { print $2 "@" $3 }')" || true
    echo "install-$name: $bin already works ($out${mod:+, $mod})"
    exit 0
  fi
done

echo "install-$name: go install $package@$version"
mkdir -p "$gobin"
GOBIN="$gobin" go install "$package@$version"
"$gobin/$name" "$version_flag"
go version -m "$gobin/$name" | awk -v n="$name" '$1 == "mod" { print "install-" n ": module " $2 "@" $3 }'
echo "install-$name: installed $gobin/$name"
