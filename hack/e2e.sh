#!/usr/bin/env bash
# e2e.sh runs the end-to-end tests (test/e2e) against a real cluster. Without a configured
# cluster (no KUBECONFIG, no ~/.kube/config), or with KUBECONFIG set to the local cluster's own
# kubeconfig, it brings up the local one (hack/local-cluster.sh) if it is not up,
# imports the locally built images, runs the tests and tears the cluster down again, whatever the
# outcome; it installs local-path-provisioner and CloudNativePG (hack/cnpg.sh) and chaos-mesh
# (hack/chaos-mesh.sh) there. Against a configured cluster, E2E_IMAGE and E2E_POSTGRES_IMAGE must
# name images that cluster can pull (make docker-build, then push), and CloudNativePG, chaos-mesh
# and a default StorageClass must be installed.
#
# A local cluster that was already running is left running; one started here is stopped again
# unless E2E_KEEP_CLUSTER=1. E2E_PASS=checks or E2E_PASS=measures runs one of the two passes of
# test/e2e (the cases that measure nothing, those that do); hack/test.sh runs the checks beside the
# fuzz smoke and the measurements alone, keeping the cluster between them.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
# stamp PHASE prints how long since the test run (hack/test.sh) or this script began: where CI's
# minutes go.
TB_T0=${TB_T0:-$(date +%s)}
stamp() { echo "[time] $1: done at $(( $(date +%s) - TB_T0 )) s" >&2; }

"$ROOT/hack/deps.sh" e2e
HELM=$(hack/tools.sh helm)
hack/tools.sh kubectl >/dev/null
BIN=$(hack/tools.sh path cluster)
export HELM PATH=$BIN:$PATH PROMETHEUS=${PROMETHEUS:-$(command -v prometheus)}

# pod_from_before_second_node starts a restricted pause pod and waits until it runs.
POD_FROM_BEFORE=tunnelbench-e2e-before/from-before-the-second-node
pod_from_before_second_node() {
  local ns=${POD_FROM_BEFORE%/*} name=${POD_FROM_BEFORE#*/}
  kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl --kubeconfig "$KUBECONFIG" apply -f - >/dev/null
  kubectl --kubeconfig "$KUBECONFIG" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $ns}
spec:
  terminationGracePeriodSeconds: 1
  securityContext: {runAsNonRoot: true, runAsUser: 65535, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: pause
    image: $(hack/images.sh tag pause)
    imagePullPolicy: IfNotPresent
    resources: {requests: {cpu: 10m, memory: 8Mi}, limits: {memory: 16Mi}}
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
EOF
  kubectl --kubeconfig "$KUBECONFIG" -n "$ns" wait pod/"$name" --for=condition=Ready --timeout=2m >/dev/null
}

if hack/local-cluster.sh selected; then
  echo "[e2e] using the local cluster" >&2
  if ! hack/local-cluster.sh running && [[ ${E2E_KEEP_CLUSTER:-} != 1 ]]; then
    trap 'hack/local-cluster.sh down --wipe' EXIT
  fi
  KUBECONFIG=$(hack/local-cluster.sh up)
  hack/images.sh import tunnelbench postgres mariadb
  # A pod from before the second node: the case "pods from before the second node terminate"
  # deletes it and waits until it is gone (starting a node once hid such pods' network namespaces,
  # and they never finished terminating). Made only when the second node is not up yet.
  if ! hack/second-node.sh running; then
    pod_from_before_second_node
    export E2E_POD_FROM_BEFORE=$POD_FROM_BEFORE
  fi
  # The second node, for the placement cases: runners spread over nodes, a runner apart from the
  # server (tainted: nothing else goes there).
  hack/second-node.sh up
  E2E_SECOND_NODE=$(hack/second-node.sh name)
  export E2E_SECOND_NODE
  stamp "the cluster, its images and the second node"
  # Storage and CloudNativePG, for the tests of CloudNativePG servers; chaos-mesh, for the
  # chaos-mesh emulator of an emulated link: side by side, each mostly waiting for its pods, once
  # their images (and the sources they are built from) are there, built one after the other.
  hack/images.sh build cnpg local-path-provisioner chaos-mesh chaos-daemon >/dev/null
  KUBECONFIG=$KUBECONFIG hack/cnpg.sh install &
  cnpg=$!
  KUBECONFIG=$KUBECONFIG hack/chaos-mesh.sh install
  wait "$cnpg"
  stamp "CloudNativePG and chaos-mesh"
  # `make demo` leaves its PostgreSQL running, 500m of CPU requested on a 2-core node: the e2e's
  # largest runner pod (4 tunnels, 900m) would not fit beside it. Scaled to zero, its benchmark
  # and results stay; `make demo` scales it back.
  if kubectl --kubeconfig "$KUBECONFIG" -n tunnelbench-demo get deploy/pg >/dev/null 2>&1; then
    echo "[e2e] scaling the demo's PostgreSQL (namespace tunnelbench-demo) to zero to free its CPU" >&2
    kubectl --kubeconfig "$KUBECONFIG" -n tunnelbench-demo scale deploy/pg --replicas=0 >/dev/null
  fi
  E2E_IMAGE=$(hack/images.sh tag tunnelbench)
  # The image's archive, named by its content: a rebuilt image under the same tag rolls the
  # operator of a kept cluster (E2E_KEEP_CLUSTER) on the chart's upgrade.
  E2E_IMAGE_ARCHIVE=$(basename "$(hack/images.sh build tunnelbench)")
  export E2E_IMAGE_ARCHIVE
  E2E_POSTGRES_IMAGE=$(hack/images.sh tag postgres)
  E2E_MARIADB_IMAGE=$(hack/images.sh tag mariadb)
  # The node's containerd, for the one fault chaos-mesh cannot inject: killing a native sidecar
  # (its container-kill looks only at a pod's containers, not its init containers).
  E2E_CONTAINERD_SOCKET=$(hack/local-cluster.sh containerd-socket)
  export E2E_CONTAINERD_SOCKET
fi
export KUBECONFIG E2E_IMAGE=${E2E_IMAGE:?set E2E_IMAGE for a configured cluster} \
  E2E_POSTGRES_IMAGE=${E2E_POSTGRES_IMAGE:?set E2E_POSTGRES_IMAGE for a configured cluster} \
  E2E_MARIADB_IMAGE=${E2E_MARIADB_IMAGE:?set E2E_MARIADB_IMAGE for a configured cluster}

# The kubectl plugin, as a user runs it (the schedules' case reads the history with it).
E2E_PLUGIN=$(mktemp -d)/kubectl-tunnelbench
go build -o "$E2E_PLUGIN" ./cmd/kubectl-tunnelbench
export E2E_PLUGIN

# The e2e's output is long (pod logs follow a failure): the tests' failures are said again at its end.
E2E_FAILURES=$(dirname "$E2E_PLUGIN")/testfailures
go build -o "$E2E_FAILURES" ./hack/testfailures

stamp "ready for the e2e tests"
status=0
# 50m: the suite took 2,197 s on 2026-12-03 and hit 40m (2,400 s) in a slower CI run the same day.
go test -tags e2e -count=1 -timeout 50m -json ./test/e2e/ "$@" | "$E2E_FAILURES" || status=$?
stamp "the e2e tests"
exit "$status"
