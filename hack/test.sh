#!/usr/bin/env bash
# test.sh runs every test of the project: unit tests, the envtest suites (a real kube-apiserver and
# etcd built from the Go module proxy), the integration tests against a real PostgreSQL, the Helm
# chart tests, and the end-to-end tests in a real cluster (hack/e2e.sh: the local one, brought up
# and down again, when none is configured).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

hack/deps.sh
KUBEBUILDER_ASSETS=$(hack/tools.sh envtest)
THIRD_PARTY_CRDS=$(hack/tools.sh crds)
HELM=$(hack/tools.sh helm)
export KUBEBUILDER_ASSETS THIRD_PARTY_CRDS HELM

# Generated files must match their sources.
make --no-print-directory verify

go vet ./...
make --no-print-directory lint
go test -count=1 -timeout 20m "$@" $(go list ./... | grep -v /test/e2e)
# Every fuzz target briefly, as a smoke (make fuzz runs them longer).
FUZZTIME=3s hack/fuzz.sh

hack/e2e.sh
