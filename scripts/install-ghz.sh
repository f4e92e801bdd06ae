#!/usr/bin/env bash
# Installs ghz v0.120.0 (the gRPC load generator of the bench's gRPC rows, bench/ghz-load.ts)
# to $(go env GOPATH)/bin/ghz with `go install` from the Go module proxy.
# Idempotent: does nothing when a working ghz (`ghz --version` succeeds, any version) is already
# on PATH or in $(go env GOPATH)/bin. Takes about 90 seconds the first time (it compiles
# grpc-go). A binary built by `go install` reports "dev"; `go version -m` shows the module version.
set -euo pipefail

VERSION=v0.120.0
MODULE=github.com/bojand/ghz

command -v go >/dev/null || { echo "install-ghz: Go is required (https://go.dev/dl/)" >&2; exit 1; }

gobin="$(go env GOPATH | cut -d: -f1)/bin"
for bin in "$(command -v ghz || true)" "$gobin/ghz"; do
  # Capture first: pipefail and an early-closing grep do not mix.
  if [ -n "$bin" ] && [ -x "$bin" ] && out="$("$bin" --version 2>&1)"; then
    mod="$(go version -m "$bin" 2>/dev/null | awk '$1 == "mod" { print $2 "@" $3 }')" || true
    echo "install-ghz: $bin already works ($out${mod:+, $mod})"
    exit 0
  fi
done

echo "install-ghz: go install $MODULE/cmd/ghz@$VERSION"
mkdir -p "$gobin"
GOBIN="$gobin" go install "$MODULE/cmd/ghz@$VERSION"
"$gobin/ghz" --version
go version -m "$gobin/ghz" | awk '$1 == "mod" { print "install-ghz: module " $2 "@" $3 }'
echo "install-ghz: installed $gobin/ghz"
