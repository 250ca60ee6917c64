#!/usr/bin/env bash
# load.sh runs hack/bench/load in the local cluster (brought up if it is not, as `make demo` does):
# images built and imported, the operator installed or upgraded with its Helm chart, the demo's
# PostgreSQL scaled to zero to free its CPU; then many benchmarks applied at once.
#
#   hack/bench/load.sh [-benchmarks 100] [-servers 2]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
HELM=$(hack/tools.sh helm)
hack/tools.sh kubectl >/dev/null
export PATH=$(hack/tools.sh path cluster):$PATH

if ! hack/local-cluster.sh selected; then
  echo "load: needs the local cluster (unset KUBECONFIG, or set it to $(hack/local-cluster.sh kubeconfig))" >&2
  exit 2
fi
KUBECONFIG=$(hack/local-cluster.sh up)
export KUBECONFIG
hack/images.sh import tunnelbench postgres
IMAGE=$(hack/images.sh tag tunnelbench)
IMAGE_ARCHIVE=$(basename "$(hack/images.sh build tunnelbench)")
"$HELM" upgrade --install tunnelbench charts/tunnelbench --namespace tunnelbench-system --create-namespace \
  --set image.repository="${IMAGE%:*}" --set image.tag="${IMAGE##*:}" \
  --set-string "podAnnotations.tunnelbench\.io/image=$IMAGE_ARCHIVE" --wait --timeout 5m >/dev/null
if kubectl -n tunnelbench-demo get deploy/pg >/dev/null 2>&1; then
  kubectl -n tunnelbench-demo scale deploy/pg --replicas=0 >/dev/null
fi
go run ./hack/bench/load -postgres-image "$(hack/images.sh tag postgres)" "$@"
