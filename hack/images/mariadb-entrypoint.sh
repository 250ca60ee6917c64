#!/bin/sh
# Entry point of the e2e MariaDB image: initializes a data folder on first start (an "app" user
# with APP_PASSWORD and an "app" database; the administrator logs in by the socket's peer
# credentials only) and runs mariadbd with TLS from the certificate mounted at $TLS_DIR (tls.crt,
# tls.key) and the CA at $CA_DIR/ca.crt, which also verifies the client certificates sysbench
# presents.
set -eu
DATADIR=${DATADIR:-/var/lib/mysql/data}
TLS_DIR=${TLS_DIR:-/tls}
CA_DIR=${CA_DIR:-/tls-ca}
SOCKET=/tmp/mariadbd.sock
me=$(id -un)

if [ ! -d "$DATADIR/mysql" ]; then
  : "${APP_PASSWORD:?APP_PASSWORD is required}"
  mariadb-install-db --no-defaults --datadir="$DATADIR" --user="$me" --auth-root-authentication-method=socket \
    --skip-test-db >/dev/null
  mariadbd --no-defaults --datadir="$DATADIR" --skip-networking --socket="$SOCKET" --skip-log-bin &
  pid=$!
  until mariadb-admin --no-defaults --socket="$SOCKET" -u"$me" ping >/dev/null 2>&1; do sleep 0.2; done
  # The password is the fixture's random hex: no quoting to escape.
  mariadb --no-defaults --socket="$SOCKET" -u"$me" -e "CREATE DATABASE app; \
    CREATE USER 'app'@'%' IDENTIFIED BY '$APP_PASSWORD'; GRANT ALL ON app.* TO 'app'@'%';"
  kill "$pid"
  wait "$pid" || true
fi

set -- --no-defaults --datadir="$DATADIR" --socket="$SOCKET" --bind-address=0.0.0.0 --port=3306 \
  --skip-name-resolve --max-connections=500 --skip-log-bin --log-error=/dev/stderr "$@"
if [ -f "$TLS_DIR/tls.crt" ]; then
  set -- "$@" --ssl-cert="$TLS_DIR/tls.crt" --ssl-key="$TLS_DIR/tls.key" --ssl-ca="$CA_DIR/ca.crt"
fi
exec mariadbd "$@"
