#!/usr/bin/env bash
# cnpg.sh installs what CloudNativePG clusters need into the cluster KUBECONFIG names (the local
# one by default): Rancher's local-path-provisioner as the default StorageClass, and the
# CloudNativePG operator, both built from the Go module proxy (hack/tools.sh) into local images
# (hack/images.sh), with their manifests taken from their own modules and patched for those images.
# PostgreSQL instances run the project's postgres image (PostgreSQL 15 from Debian), CloudNativePG's
# Pooler the pgbouncer image (PgBouncer from Debian trixie: CloudNativePG 1.30 needs PgBouncer ≥ 1.19).
#
# Usage: hack/cnpg.sh install   idempotent; waits (bounded) until both are available
#        hack/cnpg.sh status
set -euo pipefail
# shellcheck source=hack/cluster-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster-env.sh"

log() { printf '[cnpg] %s\n' "$*" >&2; }

# pin_image NAMESPACE DEPLOYMENT IMAGE: local images keep their tag when rebuilt, so the pod template
# carries the archive's name: a new build rolls the Deployment, an unchanged one leaves it alone.
pin_image() {
  local archive; archive=$(basename "$(hack/images.sh build "$3")")
  kubectl -n "$1" patch deploy "$2" --type merge >/dev/null \
    -p "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"tunnelbench.io/image\":\"$archive\"}}}}}"
}

# Where local-path-provisioner puts volumes on the node: inside the local cluster's data, so that
# `hack/local-cluster.sh down --wipe` removes them.
STORAGE_DIR=${STORAGE_DIR:-$CACHE/cluster/data/local-path}

install_storage() {
  local version; version=$(hack/tools.sh version local-path-provisioner)
  local src; src=$(hack/tools.sh source local-path-provisioner)
  mkdir -p "$STORAGE_DIR"
  log "local-path-provisioner $version (volumes in $STORAGE_DIR)"
  # The helper pods that create and remove volume folders run the runner image, as root: they
  # write into a root-owned host folder.
  sed -e "s|image: rancher/local-path-provisioner:.*|image: $(hack/images.sh tag local-path-provisioner)|" \
    -e "s|\"paths\":\[\"/opt/local-path-provisioner\"\]|\"paths\":[\"$STORAGE_DIR\"]|" \
    -e "s|^\( *\)image: busybox|\1image: $(hack/images.sh tag tunnelbench)\n\1securityContext: {runAsUser: 0}|" \
    "$src/deploy/local-path-storage.yaml" | kubectl apply -f - >/dev/null
  kubectl annotate storageclass local-path --overwrite storageclass.kubernetes.io/is-default-class=true >/dev/null
  pin_image local-path-storage local-path-provisioner local-path-provisioner
  kubectl -n local-path-storage rollout status deploy/local-path-provisioner --timeout=2m >/dev/null
}

install_cnpg() {
  local version; version=$(hack/tools.sh version cnpg)
  local src; src=$(hack/tools.sh source cnpg)
  local image; image=$(hack/images.sh tag cnpg)
  log "CloudNativePG $version"
  sed -e "s|ghcr.io/cloudnative-pg/cloudnative-pg:$version|$image|g" -e 's|imagePullPolicy: Always|imagePullPolicy: IfNotPresent|' \
    "$src/releases/cnpg-$version.yaml" | kubectl apply --server-side --force-conflicts -f - >/dev/null
  # The operator's configuration: the images of instances and poolers (CloudNativePG reads this
  # ConfigMap at start, so it is restarted when the ConfigMap changes).
  kubectl -n cnpg-system create configmap cnpg-controller-manager-config \
    --from-literal=POSTGRES_IMAGE_NAME="$(hack/images.sh tag postgres)" \
    --from-literal=PGBOUNCER_IMAGE_NAME="$(hack/images.sh tag pgbouncer)" \
    --dry-run=client -o yaml | kubectl apply -f - | grep -q unchanged ||
    kubectl -n cnpg-system rollout restart deploy/cnpg-controller-manager >/dev/null
  pin_image cnpg-system cnpg-controller-manager cnpg
  kubectl -n cnpg-system rollout status deploy/cnpg-controller-manager --timeout=3m >/dev/null
}

case ${1:-} in
  install)
    if [[ $KUBECONFIG == "$CACHE/cluster/etc/admin.kubeconfig" ]]; then
      hack/images.sh import tunnelbench postgres pgbouncer cnpg local-path-provisioner
    fi
    install_storage
    install_cnpg
    log "ready"
    ;;
  status)
    kubectl get storageclass
    kubectl -n local-path-storage get deploy
    kubectl -n cnpg-system get deploy
    ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
