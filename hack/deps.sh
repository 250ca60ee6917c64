#!/usr/bin/env bash
# deps.sh installs the Debian packages the tests use when they are missing: PostgreSQL 15 (server,
# initdb and pgbench, for the runner's integration tests and `make bench`), OpenSSH (the ssh
# transport's integration tests), PgBouncer (the pooler transport's), HAProxy (the proxy transport's), OpenVPN (the vpn transport's openvpn kind), MariaDB and sysbench (the MySQL engine's), Chromium (the HTML report's),
# Prometheus' promtool (the chart's alerting rules);
# with "e2e", also
# Prometheus (it scrapes the operator in the end-to-end tests) and debootstrap (images).
set -euo pipefail

need=()
if [[ ${1:-} == e2e ]]; then
  command -v prometheus >/dev/null || need+=(prometheus)
  command -v debootstrap >/dev/null || need+=(debootstrap)
fi
# promtool (in Debian's prometheus) checks and tests the chart's alerting rules.
command -v promtool >/dev/null || need+=(prometheus)
bindir=$(pg_config --bindir 2>/dev/null || true)
[[ -x /usr/lib/postgresql/15/bin/postgres || -x ${bindir:-/nonexistent}/postgres ]] || need+=(postgresql-15)
# pgbench ships in postgresql-15 on Debian, with the server.
command -v pgbench >/dev/null || need+=(postgresql-15)
# The ssh transport's integration tests run the real sshd and ssh.
[[ -x /usr/sbin/sshd ]] || need+=(openssh-server)
# The pooler transport's integration tests run the real PgBouncer.
command -v pgbouncer >/dev/null || [[ -x /usr/sbin/pgbouncer ]] || need+=(pgbouncer)
# The MySQL engine's integration tests run the real MariaDB server and sysbench (Debian's 1.0.20,
# linked against the MariaDB client library).
command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]] || need+=(mariadb-server)
command -v mariadb-admin >/dev/null || need+=(mariadb-client)
command -v sysbench >/dev/null || need+=(sysbench)
# The proxy transport's integration test runs the real HAProxy.
command -v haproxy >/dev/null || [[ -x /usr/sbin/haproxy ]] || need+=(haproxy)
# The OpenVPN ends' integration test runs the real openvpn.
[[ -x /usr/sbin/openvpn ]] || need+=(openvpn)
# hack/tools.sh reads the Kubernetes module's go.mod from the proxy.
command -v curl >/dev/null || need+=(curl)
command -v ssh >/dev/null || need+=(openssh-client)
# The HTML report is opened in a real headless Chromium (internal/present/render's integration test).
command -v chromium >/dev/null || need+=(chromium)
[[ ${#need[@]} -eq 0 ]] && exit 0

echo "[deps] installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# policy-rc.d keeps the package from starting a cluster of its own: the tests start their own.
apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
