#!/usr/bin/env bash
# demo.sh is `make demo`: the main job in one command. Without a configured cluster (no
# KUBECONFIG, no ~/.kube/config), or with KUBECONFIG set to the local cluster's kubeconfig, it
# uses the local one, brought up if it is not; it builds and imports the images,
# installs the operator with its Helm chart, deploys a PostgreSQL with TLS, runs the sample
# benchmark comparing direct and TLS, and prints `kubectl get tb` and its report with the kubectl
# plugin (bin/kubectl-tunnelbench), which also writes the HTML report under .cache/demo/.
# Only then, on the local cluster, it installs CloudNativePG (hack/cnpg.sh) and the chart's history
# store with it, and says when the benchmark's results were appended there: the first answer does
# not wait for what it does not use. At the end it prints each step's seconds.
# Against a configured cluster, IMAGE and POSTGRES_IMAGE must name images it can pull.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
t0=$SECONDS
HISTORY=()

# Where the demo's minutes go: each step's seconds, printed at the end.
STEPS=()
step_start=$SECONDS
step_done() {
  STEPS+=("$(printf '%-44s %5d s' "$1" $((SECONDS - step_start)))")
  step_start=$SECONDS
}

HELM=$(hack/tools.sh helm)
hack/tools.sh kubectl >/dev/null
export PATH=$(hack/tools.sh path cluster):$PATH
step_done "tools (helm, kubectl, the cluster's binaries)"

LOCAL=false
if hack/local-cluster.sh selected; then
  LOCAL=true
  echo "==> Using the local cluster (hack/local-cluster.sh), brought up if it is not"
  KUBECONFIG=$(hack/local-cluster.sh up)
  export KUBECONFIG
  step_done "the local cluster"
  echo "==> Building and importing the images"
  hack/images.sh import tunnelbench postgres
  IMAGE=$(hack/images.sh tag tunnelbench)
  # The image's archive, named by its content: a rebuilt image under the same tag rolls the operator.
  IMAGE_ARCHIVE=$(basename "$(hack/images.sh build tunnelbench)")
  POSTGRES_IMAGE=$(hack/images.sh tag postgres)
  step_done "the operator's and PostgreSQL's images"
fi
: "${IMAGE:?set IMAGE (and POSTGRES_IMAGE) to images your cluster can pull}" "${POSTGRES_IMAGE:?set POSTGRES_IMAGE}"

# A release that already has the history store (an earlier demo, the e2e) keeps it: installing
# without it would delete its Cluster and the history with it.
if kubectl get clusters.postgresql.cnpg.io tunnelbench-history -n tunnelbench-system >/dev/null 2>&1; then
  HISTORY=(--set history.enabled=true --set postgresImage="$POSTGRES_IMAGE")
fi
install_operator() {
  "$HELM" upgrade --install tunnelbench charts/tunnelbench --namespace tunnelbench-system --create-namespace \
    --set image.repository="${IMAGE%:*}" --set image.tag="${IMAGE##*:}" \
    ${IMAGE_ARCHIVE:+--set-string "podAnnotations.tunnelbench\.io/image=$IMAGE_ARCHIVE"} "${HISTORY[@]}" \
    --wait --timeout 5m >/dev/null
}
echo "==> Installing the operator with Helm"
install_operator
step_done "the operator (helm install)"

echo "==> Running the sample benchmark"
go run ./hack/demo --postgres-image "$POSTGRES_IMAGE"
step_done "the sample benchmark (PostgreSQL, direct, TLS)"

echo
kubectl get tunnelbenchmarks -n tunnelbench-demo
echo
go build -o bin/ ./cmd/kubectl-tunnelbench
bin/kubectl-tunnelbench report direct-vs-tls -n tunnelbench-demo
mkdir -p .cache/demo
bin/kubectl-tunnelbench report direct-vs-tls -n tunnelbench-demo -o html --file .cache/demo/direct-vs-tls.html
step_done "the report (text and HTML)"
first_answer=$((SECONDS - t0))
echo
echo "First answer after ${first_answer}s: the HTML report is .cache/demo/direct-vs-tls.html"

if [[ $LOCAL == true ]]; then
  if [[ ${#HISTORY[@]} -eq 0 ]]; then
    echo "==> Installing CloudNativePG and the history store (CloudNativePG Cluster tunnelbench-history)"
    hack/cnpg.sh install
    HISTORY=(--set history.enabled=true --set postgresImage="$POSTGRES_IMAGE")
    install_operator
    step_done "CloudNativePG and the history store"
  fi
  # The store's Cluster bootstraps, and the kubelet hands the operator its Secret within a minute
  # or two: the operator records a completed benchmark once it can, retrying until then.
  echo "==> Waiting for the results in the history store"
  if kubectl wait tb/direct-vs-tls -n tunnelbench-demo --for=jsonpath='{.status.history.recorded}'=true --timeout=5m >/dev/null; then
    echo "recorded: $(kubectl get tb direct-vs-tls -n tunnelbench-demo -o jsonpath='{.status.history.time}')"
  else
    echo "not recorded yet: $(kubectl get tb direct-vs-tls -n tunnelbench-demo -o jsonpath='{.status.history.message}')"
  fi
  step_done "the results in the history store"
fi

echo
echo "Where the demo's time went (first answer after ${first_answer}s, all done after $((SECONDS - t0))s):"
printf '  %s\n' "${STEPS[@]}"
echo
echo "The plugin is bin/kubectl-tunnelbench: with export PATH=$ROOT/bin:\$PATH,"
echo "  kubectl tunnelbench report direct-vs-tls -n tunnelbench-demo [-o markdown|csv|json|html]"
if [[ $KUBECONFIG == "$ROOT"/.cache/* ]]; then
  echo "The local cluster keeps running: export KUBECONFIG=$KUBECONFIG; stop it with hack/local-cluster.sh down"
fi
