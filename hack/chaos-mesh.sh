#!/usr/bin/env bash
# chaos-mesh.sh installs chaos-mesh into the cluster KUBECONFIG names (the local one by default):
# chaos-controller-manager and chaos-daemon built from the Go module proxy (hack/tools.sh, the
# daemon with cgo), their images built locally (hack/images.sh), and chaos-mesh's own Helm chart
# and CRDs taken from its module. The dashboard and the DNS server are left out: the operator only
# creates NetworkChaos objects. chaos-daemon runs privileged with the host's PID namespace, as
# upstream's chart has it: it enters pods' network namespaces to run tc, iptables and ipset.
# NetworkChaos gets no admission webhooks: the api module the proxy serves is a later commit than
# the controller's, and its validating webhook then refuses the controller's own status updates
# ("Cannot update chaos spec"); the operator writes complete, valid objects itself.
#
# Usage: hack/chaos-mesh.sh install   idempotent; waits (bounded) until both are available
#        hack/chaos-mesh.sh status
set -euo pipefail
# shellcheck source=hack/cluster-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster-env.sh"
NAMESPACE=chaos-mesh

log() { printf '[chaos-mesh] %s\n' "$*" >&2; }

# image_values NAME KEY: Helm values that point KEY (controllerManager or chaosDaemon) at a local
# image, pinned by its archive's name so that a rebuilt image rolls the pods.
image_values() {
  local ref; ref=$(hack/images.sh tag "$1")
  local repo=${ref#docker.io/}
  echo "--set $2.image.registry=docker.io --set $2.image.repository=${repo%%:*} --set $2.image.tag=${repo#*:}"
  echo "--set-string $2.podAnnotations.tunnelbench\.io/image=$(basename "$(hack/images.sh build "$1")")"
}

install() {
  local src; src=$(hack/tools.sh source chaos-mesh)
  local helm; helm=$(hack/tools.sh helm)
  log "chaos-mesh $(hack/tools.sh version chaos-mesh)"
  if [[ $KUBECONFIG == "$CACHE/cluster/etc/admin.kubeconfig" ]]; then
    hack/images.sh import chaos-mesh chaos-daemon
  fi
  # shellcheck disable=SC2046
  "$helm" upgrade --install chaos-mesh "$src/helm/chaos-mesh" --namespace "$NAMESPACE" --create-namespace \
    --wait --timeout 4m \
    $(image_values chaos-mesh controllerManager) $(image_values chaos-daemon chaosDaemon) \
    --set chaosDaemon.runtime=containerd --set chaosDaemon.socketPath="$CACHE/cluster/run/containerd.sock" \
    --set controllerManager.replicaCount=1 --set dashboard.create=false --set dnsServer.create=false \
    --set enableProfiling=false --set 'webhook.CRDS={podchaos}' >/dev/null
  kubectl -n "$NAMESPACE" rollout status deploy/chaos-controller-manager --timeout=3m >/dev/null
  kubectl -n "$NAMESPACE" rollout status ds/chaos-daemon --timeout=3m >/dev/null
}

case ${1:-} in
  install) install; log "ready" ;;
  status) kubectl -n "$NAMESPACE" get deploy,ds,pods ;;
  *) sed -n '2,11p' "$0"; exit 2 ;;
esac
