#!/usr/bin/env bash
# demo.sh is `make demo`: the main job in one command. Without a configured cluster (no
# KUBECONFIG, no ~/.kube/config), or with KUBECONFIG set to the local cluster's kubeconfig, it
# uses the local one, brought up if it is not; it builds and imports the images,
# installs the operator with its Helm chart, deploys a PostgreSQL with TLS, runs the sample
# benchmark comparing direct and TLS, and prints `kubectl get tb` and its report with the kubectl
# plugin (bin/kubectl-tunnelbench), which also writes the HTML report under .cache/demo/. On the
# local cluster it installs CloudNativePG (hack/cnpg.sh) and the chart's history store with it: the
# benchmark's results are appended there, and the demo says when.
# Against a configured cluster, IMAGE and POSTGRES_IMAGE must name images it can pull.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
t0=$SECONDS
HISTORY=()

HELM=$(hack/tools.sh helm)
hack/tools.sh kubectl >/dev/null
export PATH=$(hack/tools.sh path cluster):$PATH

if hack/local-cluster.sh selected; then
  echo "==> Using the local cluster (hack/local-cluster.sh), brought up if it is not"
  KUBECONFIG=$(hack/local-cluster.sh up)
  export KUBECONFIG
  echo "==> Building and importing the images"
  hack/images.sh import tunnelbench postgres
  IMAGE=$(hack/images.sh tag tunnelbench)
  # Named by its content: a rebuilt image under the same tag rolls the operator on upgrade.
  IMAGE_ARCHIVE=$(basename "$(hack/images.sh build tunnelbench)")
  POSTGRES_IMAGE=$(hack/images.sh tag postgres)
  echo "==> Installing CloudNativePG, for the history store"
  KUBECONFIG=$KUBECONFIG hack/cnpg.sh install
  HISTORY=(--set history.enabled=true --set postgresImage="$POSTGRES_IMAGE")
fi
: "${IMAGE:?set IMAGE (and POSTGRES_IMAGE) to images your cluster can pull}" "${POSTGRES_IMAGE:?set POSTGRES_IMAGE}"

echo "==> Installing the operator with Helm"
"$HELM" upgrade --install tunnelbench charts/tunnelbench --namespace tunnelbench-system --create-namespace \
  --set image.repository="${IMAGE%:*}" --set image.tag="${IMAGE##*:}" \
  ${IMAGE_ARCHIVE:+--set-string "podAnnotations.tunnelbench\.io/image=$IMAGE_ARCHIVE"} "${HISTORY[@]}" \
  --wait --timeout 5m >/dev/null

echo "==> Running the sample benchmark"
go run ./hack/demo --postgres-image "$POSTGRES_IMAGE"

echo
kubectl get tunnelbenchmarks -n tunnelbench-demo
echo
go build -o bin/ ./cmd/kubectl-tunnelbench
bin/kubectl-tunnelbench report direct-vs-tls -n tunnelbench-demo
if [[ ${#HISTORY[@]} -gt 0 ]]; then
  # The store's Cluster bootstraps beside the benchmark, and the kubelet hands the operator its
  # Secret within a minute or two of it: the record is retried until then.
  echo "==> Waiting for the results in the history store (CloudNativePG Cluster tunnelbench-history)"
  if kubectl wait tb/direct-vs-tls -n tunnelbench-demo --for=jsonpath='{.status.history.recorded}'=true --timeout=5m >/dev/null; then
    echo "recorded: $(kubectl get tb direct-vs-tls -n tunnelbench-demo -o jsonpath='{.status.history.time}')"
  else
    echo "not recorded yet: $(kubectl get tb direct-vs-tls -n tunnelbench-demo -o jsonpath='{.status.history.message}')"
  fi
fi
mkdir -p .cache/demo
bin/kubectl-tunnelbench report direct-vs-tls -n tunnelbench-demo -o html --file .cache/demo/direct-vs-tls.html
echo
echo "Done in $((SECONDS - t0))s. The plugin is bin/kubectl-tunnelbench: with export PATH=$ROOT/bin:\$PATH,"
echo "  kubectl tunnelbench report direct-vs-tls -n tunnelbench-demo [-o markdown|csv|json|html]"
if [[ $KUBECONFIG == "$ROOT"/.cache/* ]]; then
  echo "The local cluster keeps running: export KUBECONFIG=$KUBECONFIG; stop it with hack/local-cluster.sh down"
fi
