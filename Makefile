# TunnelBench — make help lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

TOOLS := hack/tools.sh
CONTROLLER_GEN = $(shell $(TOOLS) path controller-gen)
GOLANGCI_LINT = $(shell $(TOOLS) path golangci-lint)
ENVTEST_ASSETS = $(shell $(TOOLS) path envtest)
PKGS_UNIT = $(shell go list ./... | grep -v /test/e2e)
export GOTOOLCHAIN := local
export GOFLAGS := -buildvcs=false

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*##/ {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Development

.PHONY: tools
tools: ## Build every tool binary (controller-gen, envtest, golangci-lint, the cluster's) into .cache/.
	$(TOOLS) all

.PHONY: manifests
manifests: ## Generate the CRD and RBAC manifests.
	$(TOOLS) controller-gen >/dev/null
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:allowDangerousTypes=true paths="./api/...;./controllers/...;./internal/transport/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	hack/sync-chart.sh
	go run ./hack/dashboard
	go run ./hack/apidocs -api api/v1alpha1 -out docs/reference

.PHONY: generate
generate: ## Generate the deepcopy code.
	$(TOOLS) controller-gen >/dev/null
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths="./api/..."

.PHONY: fmt
fmt: ## Run gofmt.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

# golangci-lint's analysis cache stays with the checkout: a cache shared between two checkouts of
# the same code reports one checkout's findings with the other's paths.
.PHONY: lint
lint: ## Run golangci-lint (built into .cache/ on first use).
	$(TOOLS) golangci-lint >/dev/null
	GOLANGCI_LINT_CACHE=$(CURDIR)/.cache/golangci-lint $(GOLANGCI_LINT) run ./...

# verify checks the API reference first, before manifests rewrites it, and against a fresh render in a
# temporary directory rather than with git diff: its pages may be untracked, which git diff ignores.
.PHONY: verify
verify: ## Fail when generated files or formatting are stale.
	@reference=$$(mktemp -d); trap 'rm -rf "$$reference"' EXIT; \
	go run ./hack/apidocs -api api/v1alpha1 -out "$$reference"; \
	diff -r "$$reference/api" docs/reference/api && diff "$$reference/api.md" docs/reference/api.md || \
		{ echo "docs/reference was stale: run make manifests, commit the result"; exit 1; }
	@before=$$(git diff -- api config charts | sha256sum); \
	$(MAKE) --no-print-directory manifests generate >/dev/null; \
	after=$$(git diff -- api config charts | sha256sum); \
	test "$$before" = "$$after" || { git diff --stat -- api config charts; echo "generated files were stale: regenerated them, commit the result"; exit 1; }
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

##@ Run

.PHONY: demo
demo: ## The main job: local cluster if none is configured, images, Helm install, sample benchmark, results.
	hack/demo.sh

.PHONY: cluster-up
cluster-up: ## Bring up the local single-node cluster (prints its kubeconfig).
	hack/local-cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and restore the host.
	hack/local-cluster.sh down --wipe

.PHONY: images
images: ## Build every image archive from Debian packages; with REGISTRY=host/path, only the operator's and PostgreSQL's, tagged for it, in .cache/images/export/.
	@if [ -n "$(REGISTRY)" ]; then hack/images.sh export "$(REGISTRY)" tunnelbench postgres; \
	else hack/images.sh build all; fi

##@ Test

.PHONY: test
test: ## Run every test: unit, envtest, PostgreSQL/ssh integration, Helm chart, end-to-end (hack/test.sh).
	hack/test.sh

.PHONY: test-short
test-short: ## Go-only tests: no envtest, PostgreSQL, sshd or cluster (go test -short).
	go test -short -count=1 $(PKGS_UNIT)

.PHONY: fuzz
fuzz: ## Run every Go fuzz target for FUZZTIME each (default 90s; make test runs them 3s each).
	FUZZTIME=$${FUZZTIME:-90s} hack/fuzz.sh

.PHONY: test-e2e
test-e2e: ## Run only the end-to-end tests (local cluster if none is configured).
	hack/e2e.sh

.PHONY: bench
bench: ## Go benchmarks, the runner's overhead (hack/bench/harness), the cost of measuring a run's cost (hack/bench/measuring), the ssh transport (hack/bench/ssh) and across a WAN (hack/bench/sshwan), connection cost (hack/bench/connections), the MySQL pooler (hack/bench/mysqlpool), reproducibility (hack/bench/reproducibility), the link emulator (hack/bench/link), the planner's run-length advice simulated (hack/bench/planner), the demo's time to a decision (hack/bench/decision.sh), 100 benchmarks at once in the local cluster (hack/bench/load.sh).
	go test -run '^$$' -bench . -benchmem ./internal/...
	go test -short -run '^$$' -bench . -benchmem ./controllers/...
	go run ./hack/bench/harness
	go run ./hack/bench/measuring
	go run ./hack/bench/ssh
	go run ./hack/bench/sshwan
	go run ./hack/bench/connections
	go run ./hack/bench/mysqlpool
	go run ./hack/bench/reproducibility
	go run ./hack/bench/link
	go run ./hack/bench/planner
	hack/bench/decision.sh
	hack/bench/load.sh

##@ Build

.PHONY: build
build: ## Build the manager, the runner and the kubectl plugin into bin/.
	CGO_ENABLED=0 go build -trimpath -o bin/tunnelbench-manager ./cmd/manager
	CGO_ENABLED=0 go build -trimpath -o bin/tunnelbench-runner ./cmd/runner
	CGO_ENABLED=0 go build -trimpath -o bin/kubectl-tunnelbench ./cmd/kubectl-tunnelbench

IMG ?= docker.io/tunnelbench/tunnelbench:dev
.PHONY: docker-build
docker-build: ## Build the image with Docker, for a registry (IMG=...).
	docker build -t $(IMG) .
