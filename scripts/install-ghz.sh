#!/usr/bin/env bash
# Installs ghz v0.120.0 (the gRPC load generator of the bench's gRPC rows, bench/ghz-load.ts)
# to $(go env GOPATH)/bin/ghz; nothing when a working ghz is there (scripts/go-install-tool.sh).
# Takes about 90 seconds the first time (it compiles grpc-go).
exec bash "$(dirname "$0")/go-install-tool.sh" ghz github.com/bojand/ghz/cmd/ghz v0.120.0 --version
