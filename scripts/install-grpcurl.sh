#!/usr/bin/env bash
# Installs grpcurl v1.9.4 (the gRPC command-line client test/wire.grpcurl.test.ts
# runs) to $(go env GOPATH)/bin/grpcurl with `go install` from the Go module proxy.
# Idempotent: does nothing when a working grpcurl (`grpcurl -version` succeeds,
# any version) is already on PATH or in $(go env GOPATH)/bin. Takes about 3
# minutes the first time (it compiles grpc-go). A binary built by `go install`
# reports "dev build <no version set>"; `go version -m` shows the module version.
set -euo pipefail

VERSION=v1.9.4
MODULE=github.com/fullstorydev/grpcurl

command -v go >/dev/null || { echo "install-grpcurl: Go is required (https://go.dev/dl/)" >&2; exit 1; }

gobin="$(go env GOPATH | cut -d: -f1)/bin"
for bin in "$(command -v grpcurl || true)" "$gobin/grpcurl"; do
  # Capture first: pipefail and an early-closing grep do not mix.
  if [ -n "$bin" ] && [ -x "$bin" ] && out="$("$bin" -version 2>&1)"; then
    mod="$(go version -m "$bin" 2>/dev/null | awk '$1 == "mod" { print $2 "@" $3 }')" || true
    echo "install-grpcurl: $bin already works ($out${mod:+, $mod})"
    exit 0
  fi
done

echo "install-grpcurl: go install $MODULE/cmd/grpcurl@$VERSION"
mkdir -p "$gobin"
GOBIN="$gobin" go install "$MODULE/cmd/grpcurl@$VERSION"
"$gobin/grpcurl" -version
go version -m "$gobin/grpcurl" | awk '$1 == "mod" { print "install-grpcurl: module " $2 "@" $3 }'
echo "install-grpcurl: installed $gobin/grpcurl"
