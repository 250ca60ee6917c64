#!/usr/bin/env bash
# teardown.sh measures what a finished runner pod's teardown costs the machine in CPU: what the
# next run's start would share if the operator started it at the runner container's exit, while
# the kubelet still stops the pod's sandbox (docs/studies/build-times.md: tried, not kept).
# Each pair interleaves two arms of the same length, begun the moment a one-container Job's
# container ended (the teardown arm) or with no pod at all (the idle arm), and reads the machine's
# busy CPU (/proc/stat: every process of the cluster and the host) over that window without
# polling the API inside it.
#
#   hack/bench/teardown.sh [PAIRS] [WINDOW_SECONDS]     (default 8 pairs of 6 s windows)
#
# It needs the local cluster up (hack/local-cluster.sh up) and the runner image imported (make
# demo); it works in a namespace of its own, deleted at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
pairs=${1:-8}
window=${2:-6}
export KUBECONFIG=${KUBECONFIG:-$PWD/.cache/cluster/etc/admin.kubeconfig}
ns=tunnelbench-teardown
image=docker.io/tunnelbench/tunnelbench:dev
kubectl create namespace "$ns" >/dev/null 2>&1 || true
trap 'kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT

# busy_jiffies: the machine's CPU time spent not idle, in clock ticks (USER_HZ).
busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
hz=$(getconf CLK_TCK)

# window_ms: the busy CPU over the next $window seconds, in milliseconds.
window_ms() {
  local before after
  before=$(busy_jiffies)
  sleep "$window"
  after=$(busy_jiffies)
  echo $(((after - before) * 1000 / hz))
}

job() {
  kubectl -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 10
      containers:
      - {name: runner, image: $image, imagePullPolicy: Never, command: [sleep, "2"]}
EOF
}

ended() {
  kubectl -n "$ns" get pods -l job-name="$1" \
    -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}' 2>/dev/null
}

echo "pair  teardown ms  idle ms  (busy CPU over ${window} s; the machine has $(nproc) cores)"
teardown_all=() idle_all=()
for i in $(seq 1 "$pairs"); do
  name=teardown-$i
  job "$name"
  until [ -n "$(ended "$name")" ]; do sleep 0.2; done
  t=$(window_ms)
  # The idle arm starts once the Job completed and a settling pause has passed.
  kubectl -n "$ns" wait --for=condition=complete "job/$name" --timeout=60s >/dev/null
  sleep 3
  idle=$(window_ms)
  printf '%4d  %11d  %7d\n' "$i" "$t" "$idle"
  teardown_all+=("$t") idle_all+=("$idle")
  kubectl -n "$ns" delete job "$name" --wait=true >/dev/null
  sleep 3
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
diffs=()
for i in "${!teardown_all[@]}"; do diffs+=($((teardown_all[i] - idle_all[i]))); done
echo "median: teardown $(median "${teardown_all[@]}") ms, idle $(median "${idle_all[@]}") ms, paired difference $(median "${diffs[@]}") ms" \
  "(min $(printf '%s\n' "${diffs[@]}" | sort -n | head -1), max $(printf '%s\n' "${diffs[@]}" | sort -n | tail -1))"
