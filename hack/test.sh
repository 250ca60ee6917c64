#!/usr/bin/env bash
# test.sh runs every test of the project: unit tests, the envtest suites (a real kube-apiserver and
# etcd built from the Go module proxy) and the integration tests against a real PostgreSQL.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

hack/deps.sh
KUBEBUILDER_ASSETS=$(hack/tools.sh envtest)
HELM=$(hack/tools.sh helm)
export KUBEBUILDER_ASSETS HELM

# Generated files must match their sources.
make --no-print-directory verify

go vet ./...
make --no-print-directory lint
go test -count=1 -timeout 20m "$@" $(go list ./... | grep -v /test/e2e)
