#!/usr/bin/env bash
# Installs Jaeger v1.76.0 (the OTLP collector and trace store test/tracing.test.ts and the
# tracing bench row export to) to $(go env GOPATH)/bin/jaeger, built from the module the Go
# module proxy serves. Jaeger v2 embeds the OpenTelemetry Collector: test/support/jaeger.ts gives it
# a config with memory storage, an OTLP receiver and the query API on free loopback ports.
# Idempotent: does nothing when a jaeger binary built from that module is already on PATH or
# in $(go env GOPATH)/bin. The first build is long (it compiles the whole collector).
set -euo pipefail

VERSION=v1.76.0
MODULE=github.com/jaegertracing/jaeger

command -v go >/dev/null || { echo "install-jaeger: Go is required (https://go.dev/dl/)" >&2; exit 1; }

gobin="$(go env GOPATH | cut -d: -f1)/bin"
# Built as the main module, the binary reports its module as (devel): a stamp beside it says
# which version it was built from.
stamp="$gobin/.jaeger-version"
for bin in "$(command -v jaeger || true)" "$gobin/jaeger"; do
  if [ -n "$bin" ] && [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$MODULE@$VERSION" ]; then
    echo "install-jaeger: $bin already installed ($MODULE@$VERSION)"
    exit 0
  fi
done

mkdir -p "$gobin"
started=$(date +%s)
# `go install $MODULE/cmd/jaeger@$VERSION` refuses a module whose go.mod has a replace
# directive (Jaeger's has one), so the module is downloaded into the module cache and built
# there as the main module: its own go.mod, replace and go.sum apply.
dir="$(go mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -n "$dir" ] && [ -d "$dir/cmd/jaeger" ] || { echo "install-jaeger: could not download $MODULE@$VERSION" >&2; exit 1; }
echo "install-jaeger: go build $MODULE/cmd/jaeger@$VERSION (in $dir)"
(cd "$dir" && go build -trimpath -o "$gobin/jaeger.partial" ./cmd/jaeger)
mv "$gobin/jaeger.partial" "$gobin/jaeger"
echo "$MODULE@$VERSION" >"$stamp"
echo "install-jaeger: installed $gobin/jaeger ($MODULE@$VERSION) in $(($(date +%s) - started))s"
