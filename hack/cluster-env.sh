# cluster-env.sh is sourced by the scripts that install into a cluster (cnpg.sh, chaos-mesh.sh): it
# moves to the project's root and points kubectl at the cluster KUBECONFIG names, the local one by
# default, with the cluster's own kubectl first on PATH.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
CACHE=${TUNNELBENCH_CACHE:-$ROOT/.cache}
PATH=$(hack/tools.sh path cluster):$PATH
export PATH
if [[ -z ${KUBECONFIG:-} ]]; then KUBECONFIG=$CACHE/cluster/etc/admin.kubeconfig; fi
export KUBECONFIG
