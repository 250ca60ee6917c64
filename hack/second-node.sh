#!/usr/bin/env bash
# second-node.sh joins a second node to the local cluster (hack/local-cluster.sh, which must be
# up): a containerd, a kubelet and a kube-proxy of its own, in a network namespace of its own on
# this machine, with its pods on their own bridge (tb1, 10.88.1.0/24) routed to the first node's
# through a veth pair (10.88.254.0/30). A runner placed there reaches a server on the first node
# across nodes, as it would in a real cluster: through both nodes' routing, not a bridge.
#
# It is tainted (tunnelbench.io/second-node:NoSchedule), so only the pods that tolerate it run
# there (the e2e's placement cases) and every other measurement keeps its one node; and since both
# nodes share this machine's cores, its allocatable CPU is cut to one core (systemReserved).
# kube-router does not run there: NetworkPolicies are not enforced for its pods.
#
# Usage: hack/second-node.sh up | down [--wipe | quiet] | running | name
set -euo pipefail
# shellcheck source=hack/local-cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/local-cluster.sh"

NODE2=tunnelbench-node-2
NETNS=tunnelbench-node-2
S2=$C/node-2                  # the node's own state: configs, data, sockets
BRIDGE2=tb1
NODE2_POD_CIDR=10.88.1.0/24
NODE2_GW=10.88.1.1
LINK_HOST_IP=10.88.254.1      # the veth pair between the machine and the node's namespace
NODE2_IP=10.88.254.2
VETH_HOST=tb1-host
VETH_NODE=tb1-node
TAINT=tunnelbench.io/second-node
CGROUP_ROOT=tunnelbench-node-2
SOCK2=$S2/run/containerd.sock

in_node() { nsenter --net="/run/netns/$NETNS" "$@"; }

node2_ready() {
  [[ $(kubectl_ get node "$NODE2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

node2_running() { pid_alive node-2-kubelet && pid_alive node-2-containerd && node2_ready; }

node2_configs() {
  mkdir -p "$S2/etc/cni" "$S2/etc/static-pods" "$S2/data/pod-logs" "$S2/data/cni-ipam" "$S2/run"
  leaf kubelet-2-client "/O=system:nodes/CN=system:node:$NODE2" clientAuth
  leaf kubelet-2-server "/CN=$NODE2" serverAuth "IP:$NODE2_IP,IP:127.0.0.1"
  kubeconfig_for kubelet-2 kubelet-2-client
  containerd_config "$S2" >"$S2/etc/containerd.toml"
  cni_config "$BRIDGE2" "$NODE2_POD_CIDR" "$NODE2_GW" "$S2/data/cni-ipam" >"$S2/etc/cni/10-tunnelbench.conflist"
  {
    kubelet_config "$NODE2_IP" "$S2" kubelet-2-server
    echo "cgroupRoot: /$CGROUP_ROOT"
    echo "systemReserved: {cpu: \"1\"}"
    echo "registerWithTaints: [{key: $TAINT, value: \"true\", effect: NoSchedule}]"
  } >"$S2/etc/kubelet-config.yaml"
  kube_proxy_config "$NODE2" "$NODE2_IP" >"$S2/etc/kube-proxy.yaml"
}

# node2_network: the namespace, the veth pair and the routes both ways; the FORWARD guard lets
# pod traffic pass between the two nodes' links and still nowhere else.
node2_network() {
  # As containerd makes a pod's: a namespace bound to a file of /run/netns, never `ip netns add`,
  # which makes /run/netns a mount of its own and hides the first node's pods' namespaces under it.
  if [[ ! -e /run/netns/$NETNS ]]; then
    mkdir -p /run/netns
    touch "/run/netns/$NETNS"
    unshare --net="/run/netns/$NETNS" true
  fi
  ip link show "$VETH_HOST" >/dev/null 2>&1 || ip link add "$VETH_HOST" type veth peer name "$VETH_NODE" netns "$NETNS"
  ip addr replace "$LINK_HOST_IP/30" dev "$VETH_HOST"
  ip link set "$VETH_HOST" up
  in_node ip link set lo up
  in_node ip addr replace "$NODE2_IP/30" dev "$VETH_NODE"
  in_node ip link set "$VETH_NODE" up
  in_node ip link show "$BRIDGE2" >/dev/null 2>&1 || in_node ip link add "$BRIDGE2" type bridge
  in_node ip addr replace "$NODE2_GW/24" dev "$BRIDGE2"
  in_node ip link set "$BRIDGE2" up
  in_node ip route replace "$POD_CIDR" via "$LINK_HOST_IP"
  in_node ip route replace "$SVC_CIDR" via "$LINK_HOST_IP"
  in_node sysctl -qw net.ipv4.ip_forward=1
  in_node sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true
  ip route replace "$NODE2_POD_CIDR" via "$NODE2_IP" dev "$VETH_HOST"
  for dir in "-i $BRIDGE -o $VETH_HOST" "-i $VETH_HOST -o $BRIDGE"; do
    # shellcheck disable=SC2086 # two words a direction
    iptables -C "$GUARD" $dir -j RETURN 2>/dev/null || iptables -I "$GUARD" 1 $dir -j RETURN
  done
}

# node2_cgroups: the kubelet's cgroup root in every hierarchy, cpuset filled from the top's.
node2_cgroups() {
  local h
  for h in /sys/fs/cgroup/*/; do
    mkdir -p "$h$CGROUP_ROOT"
  done
  if [[ -d /sys/fs/cgroup/cpuset/$CGROUP_ROOT ]]; then
    cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$CGROUP_ROOT/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$CGROUP_ROOT/cpuset.mems"
  fi
}

# node2_images imports the pause image, the project's image (always: e2e rebuilds it under the
# same tag) and the MariaDB fixture's (the MySQL cases' server runs there, off the first node's
# CPU requests) into the node's containerd.
node2_images() {
  local a archives
  archives=$("$ROOT/hack/images.sh" build pause tunnelbench mariadb)
  for a in $archives; do
    ctr -a "$SOCK2" -n k8s.io images import --no-unpack=false "$a" >/dev/null
  done
}

node2_up() {
  [[ $(id -u) -eq 0 ]] || die "the second node needs root (network namespace, containerd, kubelet)"
  BIN=$("$ROOT/hack/tools.sh" path cluster)
  apiserver_ready || die "the local cluster is not up: hack/local-cluster.sh up first"
  if node2_running; then
    node2_images
    log "second node already running"
    return
  fi
  node2_down quiet
  local t0=$SECONDS
  node2_configs
  node2_network
  node2_cgroups
  start_daemon node-2-containerd env HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 \
    NO_PROXY=127.0.0.1,localhost nsenter --net="/run/netns/$NETNS" containerd --config "$S2/etc/containerd.toml"
  wait_for 30 "the second node's containerd" ctr -a "$SOCK2" version
  node2_images
  start_daemon node-2-kubelet nsenter --net="/run/netns/$NETNS" "$BIN/kubelet" \
    --config="$S2/etc/kubelet-config.yaml" --kubeconfig="$C/etc/kubelet-2.kubeconfig" --root-dir="$S2/data/kubelet" \
    --cert-dir="$S2/data/kubelet/pki" --hostname-override=$NODE2 --node-ip=$NODE2_IP
  start_daemon node-2-kube-proxy nsenter --net="/run/netns/$NETNS" "$BIN/kube-proxy" --config="$S2/etc/kube-proxy.yaml"
  wait_for 120 "node $NODE2 Ready" node2_ready
  log "second node up in $((SECONDS - t0))s"
}

# node2_down stops the node and removes what it added to the machine: its pods first (while its
# kubelet runs), then its daemons, mounts, namespace, routes, guard rules and cgroups, and its
# Node object.
node2_down() {
  local mode=${1:-}
  BIN=${BIN:-$("$ROOT/hack/tools.sh" path cluster)}
  if [[ $mode != quiet ]] && pid_alive node-2-kubelet && apiserver_ready; then
    kubectl_ delete pods --all-namespaces --field-selector "spec.nodeName=$NODE2" --grace-period=1 --timeout=60s \
      >/dev/null 2>&1 || true
  fi
  stop_pid node-2-kube-proxy
  stop_pid node-2-kubelet
  if [[ -S $SOCK2 ]] && pid_alive node-2-containerd; then kill_tasks "$SOCK2"; fi
  stop_pid node-2-containerd
  pkill -9 -f "containerd-shim-runc-v2 .*-address $SOCK2" 2>/dev/null || true
  awk -v c="$(readlink -f "$S2" 2>/dev/null || echo "$S2")" '$2 ~ "^"c {print $2}' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
  if apiserver_ready; then kubectl_ delete node "$NODE2" --ignore-not-found --wait=false >/dev/null 2>&1 || true; fi
  ip route del "$NODE2_POD_CIDR" 2>/dev/null || true
  iptables -D "$GUARD" -i "$BRIDGE" -o "$VETH_HOST" -j RETURN 2>/dev/null || true
  iptables -D "$GUARD" -i "$VETH_HOST" -o "$BRIDGE" -j RETURN 2>/dev/null || true
  ip link del "$VETH_HOST" 2>/dev/null || true
  ip netns del "$NETNS" 2>/dev/null || true
  find /sys/fs/cgroup/*/"$CGROUP_ROOT" -depth -type d -exec rmdir {} + 2>/dev/null || true
  if [[ $mode == --wipe || $mode == quiet ]]; then
    rm -rf "$S2/data"
  fi
}

case ${1:-} in
  up) node2_up ;;
  down) node2_down "${2:-}" ;;
  running) BIN=$("$ROOT/hack/tools.sh" path cluster); node2_running ;;
  name) echo "$NODE2" ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
