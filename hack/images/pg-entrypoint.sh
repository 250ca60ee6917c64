#!/bin/sh
# Entry point of the e2e PostgreSQL image: initializes a cluster on first start (superuser password
# from POSTGRES_PASSWORD, an "app" role and database from APP_PASSWORD) and runs PostgreSQL with
# TLS from the certificate mounted at $TLS_DIR (tls.crt, tls.key).
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
TLS_DIR=${TLS_DIR:-/tls}
export PATH=/usr/lib/postgresql/15/bin:$PATH

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" "${APP_PASSWORD:?APP_PASSWORD is required}"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U postgres --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  cat >"$PGDATA/pg_hba.conf" <<HBA
local all all trust
hostssl all all all scram-sha-256
host all all all scram-sha-256
HBA
  postgres -D "$PGDATA" -c listen_addresses='' -c unix_socket_directories=/tmp &
  pid=$!
  until pg_isready -h /tmp -U postgres -q; do sleep 0.2; done
  psql -h /tmp -U postgres -v ON_ERROR_STOP=1 -q -v pw="$APP_PASSWORD" <<SQL
CREATE ROLE app LOGIN PASSWORD :'pw';
CREATE DATABASE app OWNER app;
SQL
  kill -INT "$pid"
  wait "$pid" || true
fi

set -- -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp -c max_connections=200 -c jit=off "$@"
if [ -f "$TLS_DIR/tls.crt" ]; then
  set -- "$@" -c ssl=on -c ssl_cert_file="$TLS_DIR/tls.crt" -c ssl_key_file="$TLS_DIR/tls.key"
fi
exec postgres "$@"
