#!/usr/bin/env bash
# tools.sh builds the project's tool binaries from the Go module proxy and caches them.
#
# setup-envtest and release downloads cannot be reached from this network, so everything is built
# from source modules: each tool lands in $TOOLS_DIR/<name>-<version>/ and a build is skipped when
# that folder already holds the binary. The Go build cache makes a rebuild after `rm -rf .cache`
# fast on the same machine.
#
# Usage: hack/tools.sh TOOL...   (controller-gen | envtest | crds | cnpg-manager |
#                                local-path-provisioner | chaos-controller-manager | chaos-daemon |
#                                golangci-lint | cluster | helm | coredns | etcd | kube-router |
#                                kubectl | kube-apiserver | kubelet | ... | all)
#        hack/tools.sh path TOOL  prints the cached path of TOOL (envtest: the assets folder)
#        hack/tools.sh version cnpg|local-path-provisioner|chaos-mesh  prints the pinned version
#        hack/tools.sh source cnpg|local-path-provisioner|chaos-mesh   prints its module's folder
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TUNNELBENCH_CACHE:-$ROOT/.cache}
TOOLS_DIR=$CACHE/tools

# Versions. Kubernetes follows controller-runtime v0.25 (k8s.io/* v0.37); v1.37.2's zip is refused by
# the proxy, so the control plane is pinned to v1.37.1.
K8S_VERSION=${K8S_VERSION:-v1.37.1}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
CONTROLLER_GEN_VERSION=${CONTROLLER_GEN_VERSION:-v0.23.0}
GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-v2.12.2}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
# CloudNativePG: the newest release the proxy serves whole (v1.30.1 needs machinery v0.6.0, refused).
CNPG_VERSION=${CNPG_VERSION:-v1.30.0}
# cert-manager: only its CRDs (its commands are nested modules the proxy does not serve).
CERT_MANAGER_VERSION=${CERT_MANAGER_VERSION:-v1.21.2}
# chaos-mesh has no release tags on the proxy: the newest pseudo-version of its main module, and of
# its api module (its main module points at ./api, which a downstream build must replace).
CHAOS_MESH_VERSION=${CHAOS_MESH_VERSION:-v0.9.1-0.20260902003049-47411975a8cb}
CHAOS_MESH_API_VERSION=${CHAOS_MESH_API_VERSION:-v0.0.0-20260906172039-d70b66ad97ac}
# Rancher's local-path-provisioner: v0.0.31 and v0.0.32 are refused by the proxy.
LOCAL_PATH_VERSION=${LOCAL_PATH_VERSION:-v0.0.30}
# kube-router, for its NetworkPolicy controller only: v2.1.0 is the one v2 release the proxy lists.
KUBE_ROUTER_VERSION=${KUBE_ROUTER_VERSION:-v2.1.0}
K8S_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

log() { printf '[tools] %s\n' "$*" >&2; }

# go_install MODULE@VERSION NAME [LDFLAGS]: `go install` into its own versioned folder.
go_install() {
  local pkg=$1 name=$2 version=${1##*@} ldflags="-s -w ${3:-}"
  local dir=$TOOLS_DIR/$name-$version
  if [[ -x $dir/$name ]]; then echo "$dir/$name"; return; fi
  log "building $name $version"
  mkdir -p "$dir"
  GOBIN=$dir go install -trimpath -ldflags "$ldflags" "$pkg"
  echo "$dir/$name"
}

# k8s_build NAME...: builds Kubernetes commands from k8s.io/kubernetes through a throwaway module.
# k8s.io/kubernetes points its staging modules at ./staging, so every one of them is replaced by
# the published k8s.io/<name> v0.<minor>.<patch> module.
k8s_build() {
  local dir=$TOOLS_DIR/kubernetes-$K8S_VERSION mod=$TOOLS_DIR/kubernetes-$K8S_VERSION/src
  local staging=v0.${K8S_VERSION#v1.} missing=()
  for b in "$@"; do [[ -x $dir/$b ]] || missing+=("$b"); done
  [[ ${#missing[@]} -eq 0 ]] && return
  mkdir -p "$mod"
  if [[ ! -f $mod/go.sum ]]; then
    log "resolving k8s.io/kubernetes $K8S_VERSION"
    local proxy; proxy=$(go env GOPROXY | cut -d, -f1)
    {
      printf 'module tunnelbench.local/k8sbuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
      curl -fsS "$proxy/k8s.io/kubernetes/@v/$K8S_VERSION.mod" | grep '=> ./staging' | grep -v sample- \
        | awk -v v="$staging" '{print "\t"$1" => "$1" "v}'
      echo ')'
    } > "$mod/go.mod"
    {
      echo '//go:build tools'
      echo 'package tools'
      echo 'import ('
      for c in "${K8S_COMMANDS[@]}"; do
        echo "	_ \"k8s.io/kubernetes/cmd/$c\""
      done
      echo ')'
    } > "$mod/tools.go"
    (cd "$mod" && go mod tidy)
  fi
  local ldf="-s -w" minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf="$ldf -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  for b in "${missing[@]}"; do
    log "building $b $K8S_VERSION (the first build of kube-apiserver takes ~6 min on 2 cores)"
    (cd "$mod" && go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ldf" -o "$dir/$b" "k8s.io/kubernetes/cmd/$b")
  done
}

# etcd_build: etcd's server module replaces its siblings with ../ paths, so `go install` refuses it;
# a throwaway module pins every sibling to the same version instead.
etcd_build() {
  local dir=$TOOLS_DIR/etcd-$ETCD_VERSION
  [[ -x $dir/etcd ]] && return
  mkdir -p "$dir/src"
  log "building etcd $ETCD_VERSION"
  {
    printf 'module tunnelbench.local/etcdbuild\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n\nreplace (\n' "$ETCD_VERSION"
    for m in api/v3 client/pkg/v3 client/v3 pkg/v3 server/v3 etcdctl/v3 etcdutl/v3; do
      echo "	go.etcd.io/etcd/$m => go.etcd.io/etcd/$m $ETCD_VERSION"
    done
    echo ')'
  } > "$dir/src/go.mod"
  printf '//go:build tools\npackage tools\nimport _ "go.etcd.io/etcd/server/v3"\n' > "$dir/src/tools.go"
  (cd "$dir/src" && go mod tidy && go build -trimpath -ldflags '-s -w' -o "$dir/etcd" go.etcd.io/etcd/server/v3)
}

# envtest assembles a KUBEBUILDER_ASSETS folder (kube-apiserver, etcd, kubectl).
envtest() {
  k8s_build kube-apiserver kubectl
  etcd_build
  local assets=$TOOLS_DIR/envtest-$K8S_VERSION-etcd-$ETCD_VERSION
  mkdir -p "$assets"
  # Relative links: the cache may be reached through another checkout's symlink that goes away.
  ln -sfn "../kubernetes-$K8S_VERSION/kube-apiserver" "$assets/kube-apiserver"
  ln -sfn "../kubernetes-$K8S_VERSION/kubectl" "$assets/kubectl"
  ln -sfn "../etcd-$ETCD_VERSION/etcd" "$assets/etcd"
  echo "$assets"
}

# throwaway_build NAME MODULE VERSION PACKAGE: builds a command whose module `go install` refuses
# (replace directives, or packages the proxy serves only through the main module) through a
# throwaway module that requires it.
throwaway_build() {
  local name=$1 module=$2 version=$3 pkg=$4 dir=$TOOLS_DIR/$1-$3
  [[ -x $dir/$name ]] && return
  log "building $name $version"
  mkdir -p "$dir/src"
  printf 'module tunnelbench.local/%sbuild\n\ngo 1.26.0\n\nrequire %s %s\n' "$name" "$module" "$version" >"$dir/src/go.mod"
  printf '//go:build tools\npackage tools\nimport _ "%s"\n' "$pkg" >"$dir/src/tools.go"
  (cd "$dir/src" && go get "$pkg@$version" && go build -trimpath -ldflags '-s -w' -o "$dir/$name" "$pkg")
}

# chaos_build NAME CGO: a chaos-mesh command, through a throwaway module that carries chaos-mesh's
# own replace directives (Kubernetes v0.35, runtime-spec) and the api module's pseudo-version.
# chaos-daemon needs cgo (chaos-driver's client) and is linked against this machine's glibc, which
# is the daemon image's (bookworm).
chaos_build() {
  local name=$1 cgo=$2 dir=$TOOLS_DIR/chaos-mesh-$CHAOS_MESH_VERSION
  [[ -x $dir/$name ]] && return
  log "building $name (chaos-mesh $CHAOS_MESH_VERSION, about 3 minutes)"
  mkdir -p "$dir/src"
  local gomod; gomod=$(cd "$TOOLS_DIR" && GOFLAGS= go mod download -json "github.com/chaos-mesh/chaos-mesh@$CHAOS_MESH_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  {
    printf 'module tunnelbench.local/chaosbuild\n\ngo 1.26.0\n\nrequire github.com/chaos-mesh/chaos-mesh %s\n\n' "$CHAOS_MESH_VERSION"
    echo 'replace ('
    echo "	github.com/chaos-mesh/chaos-mesh/api => github.com/chaos-mesh/chaos-mesh/api $CHAOS_MESH_API_VERSION"
    grep -E '^[[:space:]]*(k8s\.io/[^ ]+|replace github.com/opencontainers/runtime-spec) => ' "$gomod" | sed 's/^replace //'
    echo ')'
  } >"$dir/src/go.mod"
  printf '//go:build tools\npackage tools\nimport (\n\t_ "github.com/chaos-mesh/chaos-mesh/cmd/chaos-controller-manager"\n\t_ "github.com/chaos-mesh/chaos-mesh/cmd/chaos-daemon"\n)\n' \
    >"$dir/src/tools.go"
  # fx-logr is missing from the checksum database.
  (cd "$dir/src" && export GONOSUMDB=github.com/chaos-mesh/fx-logr GOFLAGS=-mod=mod &&
    go get "github.com/chaos-mesh/chaos-mesh/cmd/$name@$CHAOS_MESH_VERSION" &&
    CGO_ENABLED=$cgo go build -trimpath -ldflags '-s -w' -o "$dir/$name" "github.com/chaos-mesh/chaos-mesh/cmd/$name")
}

# third_party_crds copies the CRDs of the kinds the operator creates or reads out of their modules,
# for envtest: CloudNativePG's Cluster and Pooler, cert-manager's Certificate and issuers.
third_party_crds() {
  local dir
  dir=$(path_of crds)
  [[ -f $dir/chaos-mesh.org_networkchaos.yaml ]] && return
  log "fetching the CRDs of CloudNativePG $CNPG_VERSION, cert-manager $CERT_MANAGER_VERSION and chaos-mesh $CHAOS_MESH_VERSION from the module proxy"
  mkdir -p "$dir"
  local src
  src=$(module_dir github.com/cloudnative-pg/cloudnative-pg "$CNPG_VERSION")
  cp "$src"/config/crd/bases/postgresql.cnpg.io_{clusters,poolers}.yaml "$dir/"
  src=$(module_dir github.com/cert-manager/cert-manager "$CERT_MANAGER_VERSION")
  cp "$src"/deploy/crds/cert-manager.io_{certificates,issuers,clusterissuers}.yaml "$dir/"
  src=$(module_dir github.com/chaos-mesh/chaos-mesh "$CHAOS_MESH_VERSION")
  cp "$src"/config/crd/bases/chaos-mesh.org_networkchaos.yaml "$dir/"
  chmod 0644 "$dir"/*.yaml
}

# module_dir MODULE VERSION: the module's files, from the module cache.
module_dir() {
  (cd "$TOOLS_DIR" && GOFLAGS= go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
}

path_of() {
  case $1 in
    controller-gen) echo "$TOOLS_DIR/controller-gen-$CONTROLLER_GEN_VERSION/controller-gen" ;;
    golangci-lint) echo "$TOOLS_DIR/golangci-lint-$GOLANGCI_LINT_VERSION/golangci-lint" ;;
    helm) echo "$TOOLS_DIR/helm-$HELM_VERSION/helm" ;;
    coredns) echo "$TOOLS_DIR/coredns-$COREDNS_VERSION/coredns" ;;
    kube-router) echo "$TOOLS_DIR/kube-router-$KUBE_ROUTER_VERSION/kube-router" ;;
    etcd) echo "$TOOLS_DIR/etcd-$ETCD_VERSION/etcd" ;;
    cluster) echo "$TOOLS_DIR/kubernetes-$K8S_VERSION" ;;
    envtest) echo "$TOOLS_DIR/envtest-$K8S_VERSION-etcd-$ETCD_VERSION" ;;
    crds) echo "$TOOLS_DIR/crds-cnpg-$CNPG_VERSION-cert-manager-$CERT_MANAGER_VERSION-chaos-mesh-$CHAOS_MESH_VERSION" ;;
    cnpg-manager) echo "$TOOLS_DIR/cnpg-manager-$CNPG_VERSION/cnpg-manager" ;;
    local-path-provisioner) echo "$TOOLS_DIR/local-path-provisioner-$LOCAL_PATH_VERSION/local-path-provisioner" ;;
    chaos-controller-manager | chaos-daemon) echo "$TOOLS_DIR/chaos-mesh-$CHAOS_MESH_VERSION/$1" ;;
    kubectl | kube-*) echo "$TOOLS_DIR/kubernetes-$K8S_VERSION/$1" ;;
    *) echo "unknown tool $1" >&2; return 2 ;;
  esac
}

build() {
  case $1 in
    controller-gen) go_install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION" controller-gen ;;
    golangci-lint) go_install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION" golangci-lint ;;
    helm) go_install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" helm "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" ;;
    coredns) go_install "github.com/coredns/coredns@$COREDNS_VERSION" coredns ;;
    kube-router) go_install "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION" kube-router ;;
    etcd) etcd_build ;;
    envtest) envtest ;;
    crds) third_party_crds ;;
    cnpg-manager) throwaway_build cnpg-manager github.com/cloudnative-pg/cloudnative-pg "$CNPG_VERSION" \
      github.com/cloudnative-pg/cloudnative-pg/cmd/manager ;;
    local-path-provisioner) throwaway_build local-path-provisioner github.com/rancher/local-path-provisioner \
      "$LOCAL_PATH_VERSION" github.com/rancher/local-path-provisioner ;;
    chaos-controller-manager) chaos_build chaos-controller-manager 0 ;;
    chaos-daemon) chaos_build chaos-daemon 1 ;;
    # cluster: everything hack/local-cluster.sh runs.
    cluster) k8s_build "${K8S_COMMANDS[@]}"; etcd_build; build coredns >/dev/null; build helm >/dev/null
      build kube-router >/dev/null ;;
    kubectl | kube-*) k8s_build "$1"; path_of "$1" ;;
    all) for t in controller-gen envtest crds golangci-lint cluster; do build "$t"; done ;;
    *) echo "unknown tool $1" >&2; return 2 ;;
  esac
}

if [[ ${1:-} == path ]]; then path_of "$2"; exit; fi
if [[ ${1:-} == source ]]; then
  case $2 in
    cnpg) module_dir github.com/cloudnative-pg/cloudnative-pg "$CNPG_VERSION" ;;
    local-path-provisioner) module_dir github.com/rancher/local-path-provisioner "$LOCAL_PATH_VERSION" ;;
    chaos-mesh) module_dir github.com/chaos-mesh/chaos-mesh "$CHAOS_MESH_VERSION" ;;
    *) exit 2 ;;
  esac
  exit
fi
if [[ ${1:-} == version ]]; then
  case $2 in
    cnpg) echo "${CNPG_VERSION#v}" ;; local-path-provisioner) echo "$LOCAL_PATH_VERSION" ;;
    chaos-mesh) echo "$CHAOS_MESH_VERSION" ;; *) exit 2 ;;
  esac
  exit
fi
[[ $# -gt 0 ]] || { sed -n '2,10p' "$0"; exit 2; }
for t in "$@"; do build "$t" >/dev/null; path_of "$t"; done
