#!/usr/bin/env bash
# Installs grpcurl v1.9.4 (the gRPC command-line client test/wire.grpcurl.test.ts runs) to
# $(go env GOPATH)/bin/grpcurl; nothing when a working grpcurl is there
# (scripts/go-install-tool.sh). Takes about 3 minutes the first time (it compiles grpc-go).
exec bash "$(dirname "$0")/go-install-tool.sh" grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl v1.9.4 -version
