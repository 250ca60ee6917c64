#!/usr/bin/env bash
# decision.sh: the demo's question (direct against TLS verify-full, select-only, 10 s rounds), asked
# in the local cluster with today's fixed 3 rounds and with a precision target (goal decide, at most
# 10 rounds), in alternating order, one benchmark at a time: how long each took from its creation
# to its end, how many rounds it ran and what it answered. It needs `make demo`'s cluster, operator
# and PostgreSQL (namespace tunnelbench-demo, whose pgbench tables the demo initialized).
#
#   hack/bench/decision.sh [PAIRS]   (default 2: four benchmarks, about 6 minutes)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
export PATH=$(hack/tools.sh path cluster):$PATH
if ! hack/local-cluster.sh selected; then
  echo "decision: needs the local cluster (unset KUBECONFIG, or set it to $(hack/local-cluster.sh kubeconfig))" >&2
  exit 2
fi
KUBECONFIG=$(hack/local-cluster.sh kubeconfig)
export KUBECONFIG
pairs=${1:-2}
ns=tunnelbench-demo
if ! kubectl -n "$ns" get deploy/pg >/dev/null 2>&1; then
  echo "decision: no demo PostgreSQL in $ns: run make demo first" >&2
  exit 2
fi
kubectl -n "$ns" scale deploy/pg --replicas=1 >/dev/null
kubectl -n "$ns" rollout status deploy/pg --timeout=3m >/dev/null

# benchmark NAME LOAD_EXTRA: the demo's spec without its initialization, LOAD_EXTRA appended to
# its load.
benchmark() {
  cat <<EOF
apiVersion: bench.tunnelbench.io/v1alpha1
kind: TunnelBenchmark
metadata:
  name: $1
  namespace: $ns
  labels: {tunnelbench.io/bench: decision}
spec:
  server:
    external:
      host: pg.$ns.svc
      port: 5432
      database: app
      credentialsSecret: {name: pg-app}
      caSecret: {name: pg-ca}
  transports:
  - {name: direct, type: direct}
  - {name: tls, type: tls, tls: {sslMode: verify-full}}
  load:
    builtin: select-only
    protocol: prepared
    clients: 4
    threads: 2
    duration: 10s
    warmup: 3s
    progressInterval: 1s
$2
  runner:
    resources:
      requests: {cpu: 500m, memory: 128Mi}
  timeout: 15m
EOF
}

# ask NAME LOAD_EXTRA: runs one benchmark to its end and prints its row.
ask() {
  local name=$1 start end
  kubectl -n "$ns" delete tb "$name" --ignore-not-found --wait >/dev/null
  benchmark "$name" "$2" | kubectl apply -f - >/dev/null
  start=$(date +%s)
  if ! kubectl -n "$ns" wait tb "$name" --for=jsonpath='{.status.phase}'=Completed --timeout=15m >/dev/null; then
    echo "decision: $name did not complete: $(kubectl -n "$ns" get tb "$name" -o jsonpath='{.status.phase} {.status.conditions}')" >&2
    exit 1
  fi
  end=$(date +%s)
  local q='{.status.results[?(@.transport=="tls")].comparison}'
  local cmp rounds
  cmp=$(kubectl -n "$ns" get tb "$name" -o jsonpath="$q")
  rounds=$(kubectl -n "$ns" get tb "$name" -o jsonpath='{.status.results[?(@.transport=="tls")].runs[*].round}' | wc -w)
  python3 - "$name" "$((end - start))" "$rounds" "$cmp" <<'PY'
import json, sys
name, secs, rounds, cmp = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
print(f"| {name} | {secs} s | {rounds} | {cmp['ratio']:.3f} [{cmp.get('lower', 0):.3f}, {cmp.get('upper', 0):.3f}] | {cmp['verdict']} |")
PY
  kubectl -n "$ns" delete tb "$name" --wait >/dev/null
}

fixed='    repetitions: 3'
target=$'    repetitions: 10\n    precision: {goal: decide}'
echo "the demo's direct against TLS verify-full, select-only, 4 clients, 10 s rounds after a 3 s warm-up; $pairs pairs, alternating"
echo
echo "| benchmark | creation to end | rounds of tls | tls/direct [95 %] | verdict |"
echo "|---|---|---|---|---|"
for i in $(seq 1 "$pairs"); do
  if (( i % 2 )); then
    ask "fixed-$i" "$fixed"
    ask "decide-$i" "$target"
  else
    ask "decide-$i" "$target"
    ask "fixed-$i" "$fixed"
  fi
done
