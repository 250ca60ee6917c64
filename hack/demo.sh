#!/usr/bin/env bash
# demo.sh is `make demo`: the main job in one command. Without a configured cluster (no
# KUBECONFIG, no ~/.kube/config) it brings up the local one; it builds and imports the images,
# installs the operator with its Helm chart, deploys a PostgreSQL with TLS, runs the sample
# benchmark comparing direct and TLS, and prints `kubectl get tb` and a results table.
# Against a configured cluster, IMAGE and POSTGRES_IMAGE must name images it can pull.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
t0=$SECONDS

HELM=$(hack/tools.sh helm)
hack/tools.sh kubectl >/dev/null
export PATH=$(hack/tools.sh path cluster):$PATH

if [[ -z ${KUBECONFIG:-} && ! -f $HOME/.kube/config ]]; then
  echo "==> No cluster configured: bringing up the local one (hack/local-cluster.sh)"
  KUBECONFIG=$(hack/local-cluster.sh up)
  export KUBECONFIG
  echo "==> Building and importing the images"
  hack/images.sh import tunnelbench postgres
  IMAGE=$(hack/images.sh tag tunnelbench)
  POSTGRES_IMAGE=$(hack/images.sh tag postgres)
fi
: "${IMAGE:?set IMAGE (and POSTGRES_IMAGE) to images your cluster can pull}" "${POSTGRES_IMAGE:?set POSTGRES_IMAGE}"

echo "==> Installing the operator with Helm"
"$HELM" upgrade --install tunnelbench charts/tunnelbench --namespace tunnelbench-system --create-namespace \
  --set image.repository="${IMAGE%:*}" --set image.tag="${IMAGE##*:}" --wait --timeout 5m >/dev/null

echo "==> Running the sample benchmark"
go run ./hack/demo --postgres-image "$POSTGRES_IMAGE"

echo
kubectl get tunnelbenchmarks -n tunnelbench-demo
echo
echo "Done in $((SECONDS - t0))s. Next: kubectl describe tb direct-vs-tls -n tunnelbench-demo"
if [[ $KUBECONFIG == "$ROOT"/.cache/* ]]; then
  echo "The local cluster keeps running: export KUBECONFIG=$KUBECONFIG; stop it with hack/local-cluster.sh down"
fi
