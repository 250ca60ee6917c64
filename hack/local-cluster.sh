#!/usr/bin/env bash
# local-cluster.sh runs a real single-node Kubernetes on this machine, built from the Go module
# proxy (hack/tools.sh) and Debian packages (containerd, runc, CNI plugins), with nothing pulled
# from a registry: images are imported into containerd from archives built by hack/images.sh.
#
# Usage: hack/local-cluster.sh up | down [--wipe] | status | running | kubeconfig | containerd-socket | selected
#   status    the daemons, the node, and what runs on it holding CPU (the demo's PostgreSQL...)
#   selected  exit status 0 when the environment means this cluster: no cluster configured (no
#             KUBECONFIG, no ~/.kube/config), or KUBECONFIG is this cluster's own kubeconfig (what
#             `make demo` tells the user to export)
#
# Network rule: pods live on the project's own bridge (tb0, 10.88.0.0/24) with no default route
# and no masquerade; the pod CIDR beyond the node's /24 is blackholed, the service CIDR is routed
# only onto tb0, a FORWARD guard drops pod traffic on any other interface, CoreDNS has no upstream
# forwarder and containerd's only proxy is a dead loopback port, so nothing can be pulled.
#
# NetworkPolicies are enforced by kube-router's policy controller alone (iptables and ipset; its
# router and service proxy are off: kube-proxy and the bridge do that).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TUNNELBENCH_CACHE:-$ROOT/.cache}
C=$CACHE/cluster          # all state: pki, configs, data, logs, pids
P=$C/pki
NODE=tunnelbench-node
BRIDGE=tb0
NODE_IP=10.88.0.1
POD_CIDR=10.88.0.0/16
NODE_POD_CIDR=10.88.0.0/24
SVC_CIDR=10.96.0.0/16
DNS_IP=10.96.0.10
GUARD=TUNNELBENCH-GUARD
ETCD_PORT=32379
KUBECONFIG_PATH=$C/etc/admin.kubeconfig
UP_TIMEOUT=${UP_TIMEOUT:-300}
# Daemons in start order; down stops them in reverse.
DAEMONS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kube-router)

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds; every wait is bounded.
wait_for() {
  local timeout=$1 what=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "timed out after ${timeout}s waiting for $what (logs: $C/logs)"
    sleep 0.5
  done
}

pid_alive() { [[ -f $C/run/$1.pid ]] && kill -0 "$(cat "$C/run/$1.pid")" 2>/dev/null; }

start_daemon() {
  local name=$1; shift
  pid_alive "$name" && return
  mkdir -p "$C/logs" "$C/run"
  nohup "$@" >"$C/logs/$name.log" 2>&1 &
  echo $! >"$C/run/$name.pid"
}

kubectl_() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH" "$@"; }

install_packages() {
  local need=()
  command -v containerd >/dev/null || need+=(containerd)
  command -v runc >/dev/null || need+=(runc)
  [[ -x /usr/lib/cni/bridge ]] || need+=(containernetworking-plugins)
  command -v iptables >/dev/null || need+=(iptables)
  command -v ipset >/dev/null || need+=(ipset)
  command -v openssl >/dev/null || need+=(openssl)
  command -v curl >/dev/null || need+=(curl)
  command -v ctr >/dev/null || need+=(containerd)
  [[ ${#need[@]} -eq 0 ]] && return
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
}

# --- certificates -------------------------------------------------------------------------------

leaf() { # leaf NAME SUBJECT EKU [SAN] [CA]
  local name=$1 subj=$2 eku=$3 san=${4:-} ca=${5:-ca}
  [[ -f $P/$name.crt ]] && return
  openssl genrsa -out "$P/$name.key" 2048 2>/dev/null
  openssl req -new -key "$P/$name.key" -subj "$subj" -out "$P/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [[ -n $san ]] && echo "subjectAltName=$san"
  } >"$P/$name.ext"
  openssl x509 -req -in "$P/$name.csr" -CA "$P/$ca.crt" -CAkey "$P/$ca.key" -CAcreateserial \
    -days 3650 -extfile "$P/$name.ext" -out "$P/$name.crt" 2>/dev/null
  rm -f "$P/$name.csr" "$P/$name.ext"
}

gen_certs() {
  mkdir -p "$P"
  for ca in ca front-proxy-ca; do
    [[ -f $P/$ca.crt ]] && continue
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/$ca.key" -out "$P/$ca.crt" -days 3650 \
      -subj "/CN=tunnelbench-$ca" 2>/dev/null
  done
  leaf apiserver "/CN=kube-apiserver" serverAuth \
    "IP:127.0.0.1,IP:$NODE_IP,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:$NODE"
  leaf etcd-server "/CN=etcd" serverAuth,clientAuth "IP:127.0.0.1,DNS:localhost"
  leaf apiserver-etcd-client "/CN=kube-apiserver-etcd-client" clientAuth
  leaf apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  leaf admin "/O=system:masters/CN=kubernetes-admin" clientAuth
  leaf controller-manager "/CN=system:kube-controller-manager" clientAuth
  leaf scheduler "/CN=system:kube-scheduler" clientAuth
  leaf kube-proxy "/CN=system:kube-proxy" clientAuth
  leaf kube-router "/CN=system:kube-router" clientAuth
  leaf kubelet-client "/O=system:nodes/CN=system:node:$NODE" clientAuth
  leaf kubelet-server "/CN=$NODE" serverAuth "IP:$NODE_IP,IP:127.0.0.1"
  leaf front-proxy-client "/CN=front-proxy-client" clientAuth "" front-proxy-ca
  if [[ ! -f $P/sa.key ]]; then
    openssl genrsa -out "$P/sa.key" 2048 2>/dev/null
    openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
  fi
}

kubeconfig_for() { # kubeconfig_for NAME CERT
  local file=$C/etc/$1.kubeconfig
  [[ -f $file ]] && return
  "$BIN/kubectl" config set-cluster tunnelbench --server="https://$NODE_IP:6443" \
    --certificate-authority="$P/ca.crt" --embed-certs --kubeconfig="$file" >/dev/null
  "$BIN/kubectl" config set-credentials "$1" --client-certificate="$P/$2.crt" --client-key="$P/$2.key" \
    --embed-certs --kubeconfig="$file" >/dev/null
  "$BIN/kubectl" config set-context tunnelbench --cluster=tunnelbench --user="$1" --kubeconfig="$file" >/dev/null
  "$BIN/kubectl" config use-context tunnelbench --kubeconfig="$file" >/dev/null
}

# --- configuration ------------------------------------------------------------------------------

# containerd_config STATE: a node's containerd configuration, its root, state, sockets and CNI
# configuration under STATE (the first node's under $C/data, $C/run and $C/etc).
containerd_config() {
  local state=$1
  [[ -f $C/etc/containerd.default.toml ]] || containerd config default >"$C/etc/containerd.default.toml"
  sed -e "s#^root = .*#root = \"$state/data/containerd/root\"#" \
    -e "s#^state = .*#state = \"$state/data/containerd/state\"#" \
    -e "/^\[grpc\]/,/^\[/ s#^  address = .*#  address = \"$state/run/containerd.sock\"#" \
    -e "/^\[ttrpc\]/,/^\[/ s#^  address = .*#  address = \"$state/run/containerd-ttrpc.sock\"#" \
    -e "s#bin_dir = .*#bin_dir = \"/usr/lib/cni\"#" \
    -e "s#conf_dir = .*#conf_dir = \"$state/etc/cni\"#" \
    -e "s#restrict_oom_score_adj = .*#restrict_oom_score_adj = true#" \
    -e "s#sandbox_image = .*#sandbox_image = \"registry.k8s.io/pause:3.10\"#" \
    -e "s#disable_hugetlb_controller = .*#disable_hugetlb_controller = true#" \
    "$C/etc/containerd.default.toml"
}

# cni_config BRIDGE SUBNET GATEWAY IPAM_DIR: a node's pod network, its own bridge and /24; routes
# to the pod and service CIDRs only, no default route, no masquerade.
cni_config() {
  cat <<EOF
{ "cniVersion": "0.4.0", "name": "tunnelbench", "plugins": [
  { "type": "bridge", "bridge": "$1", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": { "type": "host-local", "ranges": [[{"subnet": "$2", "gateway": "$3"}]],
              "routes": [{"dst": "$POD_CIDR"}, {"dst": "$SVC_CIDR"}], "dataDir": "$4" } },
  { "type": "portmap", "capabilities": {"portMappings": true} },
  { "type": "loopback" } ] }
EOF
}

# kubelet_config ADDRESS STATE CERT: a kubelet's configuration, its runtime, logs and static pods
# under STATE and its serving certificate $P/CERT.crt; the caller appends what differs.
kubelet_config() {
  local address=$1 state=$2 cert=$3
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $address
port: 10250
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: unix://$state/run/containerd.sock
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
resolvConf: $C/etc/resolv.conf
podLogsDir: $state/data/pod-logs
staticPodPath: $state/etc/static-pods
tlsCertFile: $P/$cert.crt
tlsPrivateKeyFile: $P/$cert.key
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $P/ca.crt}}
authorization: {mode: Webhook}
failSwapOn: false
oomScoreAdj: 0
maxPods: 110
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
EOF
}

# kube_proxy_config NODE ADDRESS: a node's kube-proxy (iptables; NodePorts on ADDRESS alone).
kube_proxy_config() {
  cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $C/etc/kube-proxy.kubeconfig}
hostnameOverride: $1
bindAddress: $2
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$2/32"]
oomScoreAdj: 0
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

write_configs() {
  mkdir -p "$C/etc/cni" "$C/etc/static-pods" "$C/data/pod-logs" "$C/data/cni-ipam" "$C/run"
  kubeconfig_for admin admin
  kubeconfig_for controller-manager controller-manager
  kubeconfig_for scheduler scheduler
  kubeconfig_for kube-proxy kube-proxy
  kubeconfig_for kube-router kube-router
  kubeconfig_for kubelet kubelet-client

  containerd_config "$C" >"$C/etc/containerd.toml"
  grep -q "restrict_oom_score_adj = true" "$C/etc/containerd.toml" || die "containerd config: restrict_oom_score_adj not set"
  cni_config "$BRIDGE" "$NODE_POD_CIDR" "$NODE_IP" "$C/data/cni-ipam" >"$C/etc/cni/10-tunnelbench.conflist"
  printf 'search cluster.local\noptions ndots:5\n' >"$C/etc/resolv.conf"
  kubelet_config "$NODE_IP" "$C" kubelet-server >"$C/etc/kubelet-config.yaml"
  kube_proxy_config "$NODE" "$NODE_IP" >"$C/etc/kube-proxy.yaml"
}

# --- network ------------------------------------------------------------------------------------

save_host_settings() {
  [[ -f $C/run/host-sysctls ]] && return
  sysctl -n net.ipv4.ip_forward vm.overcommit_memory kernel.panic kernel.panic_on_oops vm.panic_on_oom \
    | paste -sd' ' >"$C/run/host-sysctls"
}

network_up() {
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip addr replace "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ip route replace blackhole "$POD_CIDR"
  # Not a blackhole: host→ClusterIP needs a route for the FIB lookup before kube-proxy's DNAT.
  ip route replace "$SVC_CIDR" dev "$BRIDGE" src "$NODE_IP"
  if ! iptables -nL "$GUARD" >/dev/null 2>&1; then
    iptables -N "$GUARD"
    iptables -A "$GUARD" -s "$POD_CIDR" ! -o "$BRIDGE" -j DROP
    iptables -A "$GUARD" -d "$POD_CIDR" ! -i "$BRIDGE" -j DROP
  fi
  iptables -C FORWARD -j "$GUARD" 2>/dev/null || iptables -I FORWARD 1 -j "$GUARD"
  # Pod → Service → pod on the same bridge is routed by the host; the guard keeps it on tb0.
  sysctl -qw net.ipv4.ip_forward=1
}

network_down() {
  iptables -D FORWARD -j "$GUARD" 2>/dev/null || true
  iptables -F "$GUARD" 2>/dev/null || true
  iptables -X "$GUARD" 2>/dev/null || true
  ip route del blackhole "$POD_CIDR" 2>/dev/null || true
  ip route del "$SVC_CIDR" 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true
}

# --- images -------------------------------------------------------------------------------------

import_images() {
  local archives
  archives=$("$ROOT/hack/images.sh" cluster)
  for a in $archives; do
    local tag; tag=$(tar -xOf "$a" manifest.json | sed -n 's/.*"RepoTags":\["\([^"]*\)".*/\1/p')
    if ctr -a "$C/run/containerd.sock" -n k8s.io images ls -q | grep -qx "$tag"; then continue; fi
    log "importing $tag"
    ctr -a "$C/run/containerd.sock" -n k8s.io images import --no-unpack=false "$a" >/dev/null
  done
}

# --- up / down ----------------------------------------------------------------------------------

apiserver_ready() { kubectl_ get --raw /readyz >/dev/null 2>&1; }

node_ready() {
  [[ $(kubectl_ get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

coredns_manifest() {
  local image=$1
  cat <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: system:coredns}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: system:coredns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:coredns}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
# No forward plugin: only cluster names resolve, nothing is asked upstream.
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
        }
        cache 30
        reload
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      priorityClassName: system-cluster-critical
      containers:
      - name: coredns
        image: $image
        imagePullPolicy: Never
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /health, port: 8080}, initialDelaySeconds: 10}
        resources: {requests: {cpu: 50m, memory: 32Mi}, limits: {memory: 128Mi}}
        volumeMounts: [{name: config, mountPath: /etc/coredns}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
}

cluster_running() { pid_alive kube-apiserver && pid_alive kubelet && pid_alive kube-router && apiserver_ready && node_ready; }

# kube_router_cleanup removes kube-router's policy chains and sets (its own --cleanup-config
# panics in v2.1.0, in the service proxy's part): the jumps it added to the built-in chains (marked
# "kube-router netpol"), then its chains, then its ipsets.
kube_router_cleanup() {
  local line chain set
  iptables -S 2>/dev/null | grep -E '^-A (INPUT|FORWARD|OUTPUT) .*kube-router netpol' | while read -r line; do
    eval "iptables ${line/#-A/-D}" 2>/dev/null || true
  done || true
  for chain in $(iptables -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-(ROUTER|NWPLCY|POD-FW)-/ {print $2}'); do
    iptables -F "$chain" 2>/dev/null || true
  done
  for chain in $(iptables -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-(ROUTER|NWPLCY|POD-FW)-/ {print $2}'); do
    iptables -X "$chain" 2>/dev/null || true
  done
  if command -v ipset >/dev/null; then
    for set in $(ipset list -n 2>/dev/null | grep -E '^(KUBE-|kube-router-)'); do ipset destroy "$set" 2>/dev/null || true; done
  fi
}

# kube-router reads what its informers watch, nothing more.
kube_router_rbac() {
  cat <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:kube-router"}
rules:
- apiGroups: [""]
  resources: [namespaces, pods, services, endpoints, nodes]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:kube-router"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kube-router"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:kube-router"}]
EOF
}

up() {
  [[ $(id -u) -eq 0 ]] || die "the local cluster needs root (network, containerd, kubelet)"
  install_packages
  "$ROOT/hack/tools.sh" cluster >/dev/null
  BIN=$("$ROOT/hack/tools.sh" path cluster)
  if [[ -f $KUBECONFIG_PATH ]] && cluster_running; then
    log "already running"
    echo "$KUBECONFIG_PATH"
    return
  fi
  # Anything left by a crash (processes, routes, chains, mounts) goes first.
  down quiet
  local t0=$SECONDS
  gen_certs
  write_configs
  save_host_settings
  network_up

  start_daemon containerd env HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 \
    NO_PROXY=127.0.0.1,localhost containerd --config "$C/etc/containerd.toml"
  wait_for 30 containerd ctr -a "$C/run/containerd.sock" version
  import_images

  start_daemon etcd "$("$ROOT/hack/tools.sh" path etcd)" --name tunnelbench --data-dir "$C/data/etcd" \
    --listen-client-urls "https://127.0.0.1:$ETCD_PORT" --advertise-client-urls "https://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls http://127.0.0.1:32380 --initial-advertise-peer-urls http://127.0.0.1:32380 \
    --initial-cluster tunnelbench=http://127.0.0.1:32380 --listen-metrics-urls http://127.0.0.1:32381 \
    --cert-file "$P/etcd-server.crt" --key-file "$P/etcd-server.key" --trusted-ca-file "$P/ca.crt" --client-cert-auth
  wait_for 30 etcd curl -sf http://127.0.0.1:32381/health

  start_daemon kube-apiserver "$BIN/kube-apiserver" --advertise-address=$NODE_IP --bind-address=$NODE_IP \
    --secure-port=6443 --etcd-servers="https://127.0.0.1:$ETCD_PORT" --etcd-cafile="$P/ca.crt" \
    --etcd-certfile="$P/apiserver-etcd-client.crt" --etcd-keyfile="$P/apiserver-etcd-client.key" \
    --client-ca-file="$P/ca.crt" --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" \
    --kubelet-client-certificate="$P/apiserver-kubelet-client.crt" --kubelet-client-key="$P/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$P/ca.crt" --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local --service-account-key-file="$P/sa.pub" \
    --service-account-signing-key-file="$P/sa.key" --service-cluster-ip-range=$SVC_CIDR \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allow-privileged=true \
    --enable-aggregator-routing=true --requestheader-client-ca-file="$P/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client --requestheader-username-headers=X-Remote-User \
    --requestheader-group-headers=X-Remote-Group --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$P/front-proxy-client.crt" --proxy-client-key-file="$P/front-proxy-client.key"
  wait_for 90 kube-apiserver apiserver_ready

  start_daemon kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$C/etc/controller-manager.kubeconfig" --authentication-kubeconfig="$C/etc/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$C/etc/controller-manager.kubeconfig" --bind-address=127.0.0.1 --leader-elect=false \
    --use-service-account-credentials=true --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
    --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" --allocate-node-cidrs=true \
    --cluster-cidr=$POD_CIDR --node-cidr-mask-size=24 --service-cluster-ip-range=$SVC_CIDR
  start_daemon kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$C/etc/scheduler.kubeconfig" \
    --authentication-kubeconfig="$C/etc/scheduler.kubeconfig" --authorization-kubeconfig="$C/etc/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false
  start_daemon kubelet "$BIN/kubelet" --config="$C/etc/kubelet-config.yaml" --kubeconfig="$C/etc/kubelet.kubeconfig" \
    --root-dir="$C/data/kubelet" --cert-dir="$C/data/kubelet/pki" --hostname-override=$NODE --node-ip=$NODE_IP
  start_daemon kube-proxy "$BIN/kube-proxy" --config="$C/etc/kube-proxy.yaml"

  wait_for 120 "node $NODE Ready" node_ready
  kube_router_rbac | kubectl_ apply -f - >/dev/null
  start_daemon kube-router "$("$ROOT/hack/tools.sh" path kube-router)" --kubeconfig="$C/etc/kube-router.kubeconfig" \
    --hostname-override=$NODE --run-firewall=true --run-router=false --run-service-proxy=false \
    --enable-cni=false --enable-pod-egress=false --service-cluster-ip-range=$SVC_CIDR --health-port=0
  wait_for 60 "kube-router's policy chains" iptables -nL KUBE-ROUTER-FORWARD
  local coredns_image; coredns_image=$("$ROOT/hack/images.sh" tag coredns)
  coredns_manifest "$coredns_image" | kubectl_ apply -f - >/dev/null
  wait_for 120 CoreDNS kubectl_ -n kube-system rollout status deploy/coredns --timeout=5s
  log "up in $((SECONDS - t0))s; export KUBECONFIG=$KUBECONFIG_PATH"
  echo "$KUBECONFIG_PATH"
}

stop_pid() { # stop_pid NAME: TERM, then KILL after 10s
  local f=$C/run/$1.pid
  [[ -f $f ]] || return 0
  local pid; pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

# kill_tasks SOCKET: every container of a node's containerd, killed and deleted.
kill_tasks() {
  local sock=$1 ids id
  ids=$(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null || true)
  for id in $ids; do ctr -a "$sock" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1 || true; done
  sleep 1
  for id in $ids; do ctr -a "$sock" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true; done
  ids=$(ctr -a "$sock" -n k8s.io containers ls -q 2>/dev/null || true)
  for id in $ids; do ctr -a "$sock" -n k8s.io containers delete "$id" >/dev/null 2>&1 || true; done
}

# release_pod_netns removes the pods' network namespace files containerd left in /run/netns. When
# something ran `ip netns add` after those pods started, /run/netns is bound over itself and the
# files' mounts lie beneath that layer: unlink fails with EBUSY and the kubelet can never end such a
# pod. Take the layers off, one at a time, while a pod's file cannot be removed (a layer still
# holding named namespaces stays: umount refuses it, and the file is reported).
release_pod_netns() {
  local ns
  for ns in /run/netns/cni-*; do
    [[ -e $ns ]] || continue
    umount "$ns" 2>/dev/null || true
    rm -f "$ns" 2>/dev/null && continue
    while [[ -e $ns ]] && awk '$5 == "/run/netns" {found=1} END {exit !found}' /proc/self/mountinfo; do
      log "a mount over /run/netns (an ip netns add after the pods started) hides $ns: taking it off"
      umount /run/netns 2>/dev/null || break
      umount "$ns" 2>/dev/null || true
      rm -f "$ns" 2>/dev/null || true
    done
    [[ -e $ns ]] && log "cannot remove $ns: $(rm -f "$ns" 2>&1)"
  done
  return 0
}

# down stops everything this script started and puts the host back as it found it, even after a
# failed up. "quiet" is up's cleanup before a start.
down() {
  local mode=${1:-}
  BIN=${BIN:-$("$ROOT/hack/tools.sh" path cluster)}
  "$ROOT/hack/second-node.sh" down "$mode"
  if [[ $mode != quiet ]] && pid_alive kube-apiserver && pid_alive kubelet; then
    # Let kubelet tear pods down (CNI DEL, unmounts) while it still runs.
    kubectl_ delete --all-namespaces deploy,statefulset,daemonset,job,replicaset --all --wait=false >/dev/null 2>&1 || true
    kubectl_ delete --all-namespaces pods --all --grace-period=1 --timeout=60s >/dev/null 2>&1 || true
  fi
  stop_pid kube-router
  kube_router_cleanup
  stop_pid kube-proxy
  if [[ -x $BIN/kube-proxy ]]; then
    "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  fi
  for d in kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do stop_pid "$d"; done
  if [[ -S $C/run/containerd.sock ]] && pid_alive containerd; then kill_tasks "$C/run/containerd.sock"; fi
  stop_pid containerd
  pkill -9 -f "containerd-shim-runc-v2 .*-address $C/run/containerd.sock" 2>/dev/null || true
  # Mounts under the state folder (pod volumes, overlay snapshots, shm), deepest first; by its real
  # path, as /proc/mounts has it (the cache may be reached through a symlink, as from a worktree).
  awk -v c="$(readlink -f "$C")" '$2 ~ "^"c {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  release_pod_netns
  for ipt in iptables ip6tables; do
    for table in mangle nat filter; do
      $ipt -t $table -F KUBE-KUBELET-CANARY 2>/dev/null && $ipt -t $table -X KUBE-KUBELET-CANARY 2>/dev/null
      $ipt -t $table -X KUBE-IPTABLES-HINT 2>/dev/null || true
    done
    $ipt -D INPUT -j KUBE-FIREWALL 2>/dev/null || true
    $ipt -D OUTPUT -j KUBE-FIREWALL 2>/dev/null || true
    $ipt -F KUBE-FIREWALL 2>/dev/null && $ipt -X KUBE-FIREWALL 2>/dev/null
  done
  # CNI portmap chains, if any pod used a hostPort.
  for chain in $(iptables -t nat -S 2>/dev/null | awk '/^-N CNI-/{print $2}'); do
    iptables -t nat -F "$chain" 2>/dev/null || true
  done
  for chain in $(iptables -t nat -S 2>/dev/null | awk '/^-N CNI-/{print $2}'); do
    iptables -t nat -D POSTROUTING -j "$chain" 2>/dev/null || true
    iptables -t nat -D PREROUTING -m addrtype --dst-type LOCAL -j "$chain" 2>/dev/null || true
    iptables -t nat -D OUTPUT -m addrtype --dst-type LOCAL -j "$chain" 2>/dev/null || true
    iptables -t nat -X "$chain" 2>/dev/null || true
  done
  network_down
  find /sys/fs/cgroup/*/kubepods -depth -type d -exec rmdir {} + 2>/dev/null || true
  if [[ -f $C/run/host-sysctls ]]; then
    read -r fwd overcommit panic oops oom <"$C/run/host-sysctls"
    sysctl -qw net.ipv4.ip_forward="$fwd" vm.overcommit_memory="$overcommit" kernel.panic="$panic" \
      kernel.panic_on_oops="$oops" vm.panic_on_oom="$oom" || true
    rm -f "$C/run/host-sysctls"
  fi
  # local-path is where hack/cnpg.sh's provisioner keeps volumes: they die with etcd's claims.
  if [[ $mode == --wipe ]]; then
    rm -rf "$C/data/etcd" "$C/data/kubelet" "$C/data/pod-logs" "$C/data/cni-ipam" "$C/data/local-path" "$C/logs"
  fi
  # etcd and kubelet state from a crashed run would resurrect old pods: up always starts clean,
  # keeping only the image store.
  if [[ $mode == quiet ]]; then
    rm -rf "$C/data/etcd" "$C/data/kubelet" "$C/data/pod-logs" "$C/data/cni-ipam" "$C/data/local-path"
  fi
  [[ $mode == quiet ]] || log "down"
}

status() {
  BIN=$("$ROOT/hack/tools.sh" path cluster)
  for d in "${DAEMONS[@]}"; do
    if pid_alive "$d"; then echo "$d: running (pid $(cat "$C/run/$d.pid"))"; else echo "$d: stopped"; fi
  done
  for d in node-2-containerd node-2-kubelet node-2-kube-proxy; do
    if pid_alive "$d"; then echo "$d (hack/second-node.sh): running (pid $(cat "$C/run/$d.pid"))"; fi
  done
  if pid_alive kube-apiserver; then
    kubectl_ get nodes -o wide 2>/dev/null || true
    echo
    echo "Pods holding CPU on the node (requests), outside the cluster's own namespaces:"
    kubectl_ get pods -A --field-selector=status.phase=Running -o \
      custom-columns='NAMESPACE:.metadata.namespace,POD:.metadata.name,CPU:.spec.containers[*].resources.requests.cpu' \
      2>/dev/null | awk 'NR==1 || $1 !~ /^(kube-system|cnpg-system|chaos-mesh|local-path-storage|tunnelbench-system)$/'
    kubectl_ describe node "$NODE" 2>/dev/null | sed -n '/^Allocated resources:/,/^Events:/p' | sed '$d'
  fi
}

# selected: the environment means this cluster (see the usage above).
selected() {
  if [[ -z ${KUBECONFIG:-} ]]; then
    [[ ! -f $HOME/.kube/config ]]
    return
  fi
  [[ $KUBECONFIG -ef $KUBECONFIG_PATH ]]
}

# Sourced (by hack/second-node.sh), the functions and settings alone.
[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0

case ${1:-} in
  up) up ;;
  down) down "${2:-}" ;;
  status) status ;;
  kubeconfig) echo "$KUBECONFIG_PATH" ;;
  containerd-socket) echo "$C/run/containerd.sock" ;;
  selected) selected ;;
  running) BIN=$("$ROOT/hack/tools.sh" path cluster); [[ -f $KUBECONFIG_PATH ]] && cluster_running ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
