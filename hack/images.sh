#!/usr/bin/env bash
# images.sh builds the project's container images from Debian packages and Go sources, without a
# registry: a debootstrap rootfs, apt inside a chroot, and a hand-packed docker-save archive that
# `ctr images import` accepts. Every archive is cached under .cache/images by a hash of its inputs,
# so a rebuild with no change takes seconds.
#
# Usage: hack/images.sh build NAME...   build archives, print their paths
#        hack/images.sh import NAME...  build and import into the local cluster's containerd
#        hack/images.sh cluster         build the images the cluster itself needs (pause, coredns)
#        hack/images.sh tag NAME        print an image's reference
#        hack/images.sh export REGISTRY NAME...
#                                       build, tag as REGISTRY/NAME:TAG and write docker-save archives
#                                       to .cache/images/export/NAME.tar (docker load, skopeo, ctr)
# NAME: pause | coredns | tunnelbench | postgres | mariadb | cnpg | local-path-provisioner | pgbouncer |
#       chaos-mesh | chaos-daemon | all
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TUNNELBENCH_CACHE:-$ROOT/.cache}
OUT=$CACHE/images
SUITE=bookworm
# The packages of the shared Debian layer, listed once in hack/images/runner-packages (the
# Dockerfile reads it too).
PACKAGES=$(sed -e 's/#.*//' "$ROOT/hack/images/runner-packages" | xargs)
# CloudNativePG 1.30 writes PgBouncer settings (auth_dbname) that bookworm's PgBouncer 1.18 refuses:
# the image of its Pooler comes from trixie (PgBouncer 1.24).
PGBOUNCER_SUITE=trixie
# Fixed ids so pod specs can name them: postgres as CloudNativePG runs it, the runner as distroless.
POSTGRES_UID=26
RUNNER_UID=65532
MARIADB_UID=999
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

log() { printf '[images] %s\n' "$*" >&2; }

tag() {
  case $1 in
    pause) echo "registry.k8s.io/pause:3.10" ;;
    coredns) echo "docker.io/tunnelbench/coredns:local" ;;
    tunnelbench) echo "docker.io/tunnelbench/tunnelbench:dev" ;;
    postgres) echo "docker.io/tunnelbench/postgres:15" ;;
    mariadb) echo "docker.io/tunnelbench/mariadb:10.11" ;;
    cnpg) echo "docker.io/tunnelbench/cloudnative-pg:$("$ROOT/hack/tools.sh" version cnpg)" ;;
    local-path-provisioner) echo "docker.io/tunnelbench/local-path-provisioner:$("$ROOT/hack/tools.sh" version local-path-provisioner)" ;;
    pgbouncer) echo "docker.io/tunnelbench/pgbouncer:$PGBOUNCER_SUITE" ;;
    chaos-mesh) echo "docker.io/tunnelbench/chaos-mesh:$("$ROOT/hack/tools.sh" version chaos-mesh | cut -c1-40)" ;;
    chaos-daemon) echo "docker.io/tunnelbench/chaos-daemon:$("$ROOT/hack/tools.sh" version chaos-mesh | cut -c1-40)" ;;
    *) echo "unknown image $1" >&2; return 2 ;;
  esac
}

hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# pack TAG CONFIG_JSON ARCHIVE LAYER...: writes a docker-save archive with one uncompressed layer
# per layer tar. os and architecture must be set, or containerd filters the image out.
pack() {
  local ref=$1 config=$2 archive=$3; shift 3
  local work; work=$(mktemp -d)
  local diff_ids=() layers=() i=0
  for l in "$@"; do
    cp "$l" "$work/layer$i.tar"
    diff_ids+=("\"sha256:$(sha256sum "$l" | cut -d' ' -f1)\"")
    layers+=("\"layer$i.tar\"")
    i=$((i + 1))
  done
  local ids; ids=$(IFS=,; echo "${diff_ids[*]}")
  printf '{"architecture":"amd64","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":[%s]}}' \
    "$config" "$ids" >"$work/config.json"
  local cfg; cfg=$(sha256sum "$work/config.json" | cut -d' ' -f1)
  mv "$work/config.json" "$work/$cfg.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":[%s]}]' "$cfg" "$ref" "$(IFS=,; echo "${layers[*]}")" \
    >"$work/manifest.json"
  # docker-save layout: plain member names, no "./" prefix.
  (cd "$work" && tar -cf "$archive.tmp" manifest.json "$cfg.json" layer*.tar)
  mv "$archive.tmp" "$archive"
  rm -rf "$work"
}

# layer_from DIR TAR: a reproducible layer: sorted, fixed mtime, GNU format (no pax atime/ctime
# headers, which --xattrs would add), numeric owners kept (postgres refuses a root-owned data dir).
layer_from() {
  tar --numeric-owner --sort=name --mtime=@0 -C "$1" \
    --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf "$2" .
}

mirror() {
  sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -1 \
    || true
}

# debootstrap_layer NAME SUITE PACKAGES KEY SCRIPT: a Debian minbase of SUITE with PACKAGES, cached
# by KEY; SCRIPT runs in the chroot, where `install_packages` installs PACKAGES and cleans up.
debootstrap_layer() {
  local name=$1 suite=$2 packages=$3 key=$4 script=$5
  local layer=$OUT/$name-$key.tar
  if [[ -f $layer ]]; then echo "$layer"; return; fi
  command -v debootstrap >/dev/null || { apt-get update -q >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null; }
  local m; m=$(mirror); m=${m:-http://deb.debian.org/debian}
  local rootfs=$OUT/rootfs-$key
  rm -rf "$rootfs"
  mkdir -p "$OUT"
  log "debootstrap $suite (about 2 minutes)"
  debootstrap --variant=minbase "$suite" "$rootfs" "$m" >"$OUT/debootstrap.log" 2>&1 \
    || { tail -20 "$OUT/debootstrap.log" >&2; return 1; }
  local sec; sec=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep security | head -1 || true)
  {
    echo "deb $m $suite main"
    echo "deb $m $suite-updates main"
    [[ -n $sec ]] && echo "deb $sec $suite-security main"
  } >"$rootfs/etc/apt/sources.list"
  printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
  chmod +x "$rootfs/usr/sbin/policy-rc.d"
  # No docs, man pages or locales beyond C: images stay small where it is cheap.
  printf 'path-exclude /usr/share/%s/*\n' doc man info locale lintian >"$rootfs/etc/dpkg/dpkg.cfg.d/01-slim"
  mkdir -p "$rootfs/etc/postgresql-common"
  echo "create_main_cluster = false" >"$rootfs/etc/postgresql-common/createcluster.conf"
  mount -t proc proc "$rootfs/proc"
  trap 'umount "'"$rootfs"'/proc" 2>/dev/null || true' RETURN
  log "apt-get install $packages"
  chroot "$rootfs" sh -ec "
    install_packages() {
      apt-get update -q
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $packages
      apt-get clean
      rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/* /var/cache/debconf/*-old /usr/share/doc/* \
        /usr/share/man/* /usr/share/locale/* /usr/share/i18n/*
    }
    $script
  " >"$OUT/apt.log" 2>&1 || { tail -20 "$OUT/apt.log" >&2; return 1; }
  umount "$rootfs/proc"
  rm -f "$rootfs/usr/sbin/policy-rc.d"
  layer_from "$rootfs" "$layer.tmp"
  mv "$layer.tmp" "$layer"
  rm -rf "$rootfs"
  echo "$layer"
}

# debian_layer: the shared layer of the runner and postgres images (PACKAGES and their users).
debian_layer() {
  local key; key=$(printf '%s|%s|%s|%s|v4' "$SUITE" "$PACKAGES" "$POSTGRES_UID" "$RUNNER_UID" | sha256sum | cut -c1-16)
  debootstrap_layer debian "$SUITE" "$PACKAGES" "$key" "
    # Debian gives gid 26 to tape: postgres takes it, as CloudNativePG runs postgres as 26:26.
    if getent group $POSTGRES_UID >/dev/null; then groupdel \$(getent group $POSTGRES_UID | cut -d: -f1); fi
    groupadd -g $POSTGRES_UID postgres
    useradd -u $POSTGRES_UID -g postgres -d /var/lib/postgresql -s /bin/sh postgres
    groupadd -g $RUNNER_UID tunnelbench
    # A shell, not nologin: as the SSH gateway's user it runs the gateway's ForceCommand (a wait
    # for the connection to end), which is how sshd comes to disable Nagle on the connection.
    useradd -u $RUNNER_UID -g tunnelbench -d /tmp -s /bin/sh tunnelbench
    install_packages
    # The gateway brings its own host key (generated per benchmark): none is baked in.
    rm -f /etc/ssh/ssh_host_*
    # PostgreSQL's JIT is the only user of LLVM (and z3): 130 MB that no benchmark path needs.
    rm -rf /usr/lib/x86_64-linux-gnu/libLLVM-14.so* /usr/lib/x86_64-linux-gnu/libz3.so* \
      /usr/lib/postgresql/15/lib/llvmjit*.so /usr/lib/postgresql/15/lib/bitcode
    install -d -o postgres -g postgres -m 0755 /var/lib/postgresql
    test \$(id -u postgres) = $POSTGRES_UID
    test -x /usr/sbin/pgbouncer"
}

# The PgBouncer of CloudNativePG's Pooler (PGBOUNCER_SUITE). CloudNativePG runs it as 998:996 with
# its own configuration, as /usr/bin/pgbouncer.
pgbouncer_layer() {
  local key; key=$(printf '%s|pgbouncer ca-certificates|v1' "$PGBOUNCER_SUITE" | sha256sum | cut -c1-16)
  debootstrap_layer pgbouncer-base "$PGBOUNCER_SUITE" "pgbouncer ca-certificates" "$key" "
    install_packages
    [ -x /usr/bin/pgbouncer ] || ln -s /usr/sbin/pgbouncer /usr/bin/pgbouncer
    /usr/bin/pgbouncer --version"
}

build_pgbouncer() {
  local base; base=$(pgbouncer_layer)
  local key; key=$(hash_of <(basename "$base") "$0")
  local archive=$OUT/pgbouncer-$key.tar
  [[ -f $archive ]] && { echo "$archive"; return; }
  pack "$(tag pgbouncer)" '{"Entrypoint":["/usr/bin/pgbouncer"],"User":"998:996","Env":["PATH=/usr/sbin:/usr/bin:/bin"]}' \
    "$archive" "$base"
  echo "$archive"
}

go_binaries() { # go_binaries DIR: the static manager and runner
  mkdir -p "$1/usr/local/bin"
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$1/usr/local/bin/tunnelbench-manager" ./cmd/manager \
    && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$1/usr/local/bin/tunnelbench-runner" ./cmd/runner)
}

build_pause() {
  if ! command -v gcc >/dev/null || [[ ! -f /usr/lib/x86_64-linux-gnu/libc.a ]]; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gcc libc6-dev >/dev/null
  fi
  local src=$ROOT/hack/images/pause.c key; key=$(hash_of "$src" "$0")
  local archive=$OUT/pause-$key.tar
  [[ -f $archive ]] && { echo "$archive"; return; }
  local work; work=$(mktemp -d)
  mkdir -p "$work/rootfs"
  gcc -static -Os -s -o "$work/rootfs/pause" "$src"
  layer_from "$work/rootfs" "$work/layer.tar"
  pack "$(tag pause)" '{"Entrypoint":["/pause"],"User":"65535:65535"}' "$archive" "$work/layer.tar"
  rm -rf "$work"
  echo "$archive"
}

build_coredns() {
  local bin; bin=$("$ROOT/hack/tools.sh" coredns)
  local key; key=$(hash_of "$bin" "$0")
  local archive=$OUT/coredns-$key.tar
  [[ -f $archive ]] && { echo "$archive"; return; }
  local work; work=$(mktemp -d)
  mkdir -p "$work/rootfs/etc/coredns"
  cp "$bin" "$work/rootfs/coredns"
  layer_from "$work/rootfs" "$work/layer.tar"
  pack "$(tag coredns)" '{"Entrypoint":["/coredns"]}' "$archive" "$work/layer.tar"
  rm -rf "$work"
  echo "$archive"
}

build_tunnelbench() {
  local base; base=$(debian_layer)
  local work; work=$(mktemp -d)
  # Explicitly: build runs inside $(...) (import), where set -e does not reach, and an image
  # without its binaries must never be packed.
  go_binaries "$work/rootfs" || { log "error: go build of the manager or the runner failed"; exit 1; }
  layer_from "$work/rootfs" "$work/bin.tar"
  local key; key=$(hash_of "$work/bin.tar" <(basename "$base") "$0")
  local archive=$OUT/tunnelbench-$key.tar
  if [[ ! -f $archive ]]; then
    pack "$(tag tunnelbench)" \
      "{\"Entrypoint\":[\"/usr/local/bin/tunnelbench-manager\"],\"User\":\"$RUNNER_UID:$RUNNER_UID\",\"Env\":[\"PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin\",\"HOME=/tmp\"]}" \
      "$archive" "$base" "$work/bin.tar"
  fi
  rm -rf "$work"
  echo "$archive"
}

build_postgres() {
  local base; base=$(debian_layer)
  local entry=$ROOT/hack/images/pg-entrypoint.sh
  local key; key=$(hash_of "$entry" <(basename "$base") "$0")
  local archive=$OUT/postgres-$key.tar
  [[ -f $archive ]] && { echo "$archive"; return; }
  local work; work=$(mktemp -d)
  install -D -m 0755 "$entry" "$work/rootfs/usr/local/bin/pg-entrypoint"
  layer_from "$work/rootfs" "$work/entry.tar"
  pack "$(tag postgres)" \
    "{\"Entrypoint\":[\"/usr/local/bin/pg-entrypoint\"],\"User\":\"$POSTGRES_UID:$POSTGRES_UID\",\"Env\":[\"PATH=/usr/lib/postgresql/15/bin:/usr/bin:/bin\",\"PGDATA=/var/lib/postgresql/data\"]}" \
    "$archive" "$base" "$work/entry.tar"
  rm -rf "$work"
  echo "$archive"
}

# The e2e's MariaDB (10.11, bookworm's), run as mysql with a fixed id that pod specs can name:
# created before the package, whose postinst then keeps it.
mariadb_layer() {
  local key; key=$(printf '%s|mariadb-server|%s|v1' "$SUITE" "$MARIADB_UID" | sha256sum | cut -c1-16)
  debootstrap_layer mariadb-base "$SUITE" "mariadb-server" "$key" "
    groupadd -g $MARIADB_UID mysql
    useradd -u $MARIADB_UID -g mysql -d /var/lib/mysql -s /bin/false mysql
    install_packages
    install -d -o mysql -g mysql -m 0755 /var/lib/mysql
    test \$(id -u mysql) = $MARIADB_UID
    command -v mariadbd mariadb-install-db mariadb-admin"
}

build_mariadb() {
  local base; base=$(mariadb_layer)
  local entry=$ROOT/hack/images/mariadb-entrypoint.sh
  local key; key=$(hash_of "$entry" <(basename "$base") "$0")
  local archive=$OUT/mariadb-$key.tar
  [[ -f $archive ]] && { echo "$archive"; return; }
  local work; work=$(mktemp -d)
  install -D -m 0755 "$entry" "$work/rootfs/usr/local/bin/mariadb-entrypoint"
  layer_from "$work/rootfs" "$work/entry.tar"
  pack "$(tag mariadb)" \
    "{\"Entrypoint\":[\"/usr/local/bin/mariadb-entrypoint\"],\"User\":\"$MARIADB_UID:$MARIADB_UID\",\"Env\":[\"PATH=/usr/sbin:/usr/bin:/bin\"]}" \
    "$archive" "$base" "$work/entry.tar"
  rm -rf "$work"
  echo "$archive"
}

# static_image NAME TOOL ENTRYPOINT USER: an image holding one static binary built by hack/tools.sh.
static_image() {
  local name=$1 bin entry=$3 user=$4; bin=$("$ROOT/hack/tools.sh" "$2")
  local key; key=$(hash_of "$bin" <(echo "$entry $user") "$0")
  local archive=$OUT/$name-$key.tar
  [[ -f $archive ]] && { echo "$archive"; return; }
  local work; work=$(mktemp -d)
  install -D -m 0755 "$bin" "$work/rootfs$entry"
  layer_from "$work/rootfs" "$work/layer.tar"
  pack "$(tag "$name")" "{\"Entrypoint\":[\"$entry\"],\"User\":\"$user\",\"Env\":[\"PATH=/usr/bin:/bin\"]}" \
    "$archive" "$work/layer.tar"
  rm -rf "$work"
  echo "$archive"
}

# CloudNativePG's operator image, laid out as its Dockerfile does: the operator finds the instance
# manager of each architecture as operator/manager_<arch> (relative to /, its working directory)
# and copies it into instance pods; /manager links to this machine's.
build_cnpg() {
  local bin; bin=$("$ROOT/hack/tools.sh" cnpg-manager)
  local key; key=$(hash_of "$bin" "$0")
  local archive=$OUT/cnpg-$key.tar
  [[ -f $archive ]] && { echo "$archive"; return; }
  local work; work=$(mktemp -d)
  install -D -m 0755 "$bin" "$work/rootfs/operator/manager_amd64"
  ln -s operator/manager_amd64 "$work/rootfs/manager"
  layer_from "$work/rootfs" "$work/layer.tar"
  pack "$(tag cnpg)" '{"Entrypoint":["/manager"],"User":"10001:10001","WorkingDir":"/","Env":["PATH=/usr/bin:/bin"]}' \
    "$archive" "$work/layer.tar"
  rm -rf "$work"
  echo "$archive"
}
build_local-path-provisioner() {
  static_image local-path-provisioner local-path-provisioner /usr/bin/local-path-provisioner 65532:65532
}

# chaos-mesh's controller manager: one static binary.
build_chaos-mesh() {
  static_image chaos-mesh chaos-controller-manager /usr/local/bin/chaos-controller-manager 65532:65532
}

# chaos-daemon acts inside pods' network namespaces with tc, iptables and ipset (legacy iptables, as
# upstream's image), entered through nsexec (hack/images/nsexec over nsenter), with a tc that
# copes with kernels lacking sch_prio (hack/images/tc). It runs privileged, as root, by
# chaos-mesh's chart.
chaos_daemon_layer() {
  local packages="iproute2 iptables ipset util-linux procps ca-certificates"
  local key; key=$(printf '%s|%s|v1' "$SUITE" "$packages" | sha256sum | cut -c1-16)
  debootstrap_layer chaos-daemon-base "$SUITE" "$packages" "$key" "
    install_packages
    update-alternatives --set iptables /usr/sbin/iptables-legacy
    command -v tc ipset nsenter"
}

build_chaos-daemon() {
  local base; base=$(chaos_daemon_layer)
  local bin; bin=$("$ROOT/hack/tools.sh" chaos-daemon)
  local key; key=$(hash_of "$bin" "$ROOT/hack/images/nsexec" "$ROOT/hack/images/tc" <(basename "$base") "$0")
  local archive=$OUT/chaos-daemon-$key.tar
  [[ -f $archive ]] && { echo "$archive"; return; }
  local work; work=$(mktemp -d)
  install -D -m 0755 "$bin" "$work/rootfs/usr/local/bin/chaos-daemon"
  install -D -m 0755 "$ROOT/hack/images/nsexec" "$work/rootfs/usr/local/bin/nsexec"
  # Ahead of /usr/sbin/tc on PATH (hack/images/tc says why).
  install -D -m 0755 "$ROOT/hack/images/tc" "$work/rootfs/usr/local/bin/tc"
  layer_from "$work/rootfs" "$work/bin.tar"
  pack "$(tag chaos-daemon)" \
    '{"Entrypoint":["/usr/local/bin/chaos-daemon"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}' \
    "$archive" "$base" "$work/bin.tar"
  rm -rf "$work"
  echo "$archive"
}

build() {
  mkdir -p "$OUT"
  for name in "$@"; do
    case $name in
      all) build pause coredns tunnelbench postgres cnpg local-path-provisioner pgbouncer ;;
      pause | coredns | tunnelbench | postgres | mariadb | cnpg | local-path-provisioner | pgbouncer | chaos-mesh | chaos-daemon)
        "build_$name" ;;
      *) echo "unknown image $name" >&2; return 2 ;;
    esac
  done
}

# import_local ARCHIVE...: into the local cluster's containerd.
import_local() {
  local sock=$CACHE/cluster/run/containerd.sock
  [[ -S $sock ]] || { echo "the local cluster is not running (hack/local-cluster.sh up)" >&2; return 1; }
  # The image store survives `down`; a marker per archive skips what it already holds.
  local markers=$CACHE/cluster/data/containerd/imported
  mkdir -p "$markers"
  for a in "$@"; do
    [[ -f $markers/$(basename "$a") ]] && continue
    log "importing $(basename "$a")"
    ctr -a "$sock" -n k8s.io images import "$a" >/dev/null
    touch "$markers/$(basename "$a")"
  done
}

# export REGISTRY NAME...: each image built and re-tagged under the registry a user pushes to, as
# .cache/images/export/NAME.tar; prints each reference and archive. Only the archive's manifest
# changes: layers and config are the built ones.
export_images() {
  local registry=${1%/}; shift
  [[ -n $registry ]] || { echo "export needs a registry, e.g. registry.example.com/tunnelbench" >&2; return 2; }
  local dir=$OUT/export name archive ref work
  mkdir -p "$dir"
  for name in "$@"; do
    archive=$(build "$name")
    ref=$registry/$(tag "$name" | sed 's#.*/##')
    work=$(mktemp -d)
    tar -xf "$archive" -C "$work"
    sed -i "s#\"RepoTags\":\[\"[^\"]*\"\]#\"RepoTags\":[\"$ref\"]#" "$work/manifest.json"
    grep -q "\"$ref\"" "$work/manifest.json" || { echo "cannot re-tag $archive as $ref" >&2; rm -rf "$work"; return 1; }
    # docker-save layout: manifest.json first, plain member names.
    (cd "$work" && tar -cf "$dir/$name.tar.tmp" manifest.json $(ls | grep -v '^manifest.json$'))
    mv "$dir/$name.tar.tmp" "$dir/$name.tar"
    rm -rf "$work"
    echo "$ref $dir/$name.tar"
  done
}

case ${1:-} in
  build) shift; build "$@" ;;
  export) shift; registry=${1:-}; shift || true; export_images "$registry" "$@" ;;
  import) shift; archives=$(build "$@"); import_local $archives ;;
  cluster) build pause coredns ;;
  tag) tag "$2" ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
