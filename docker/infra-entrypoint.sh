#!/bin/sh
# Runs one of the infrastructure services of docker/infra.Containerfile in the foreground, as its
# own user: `osc-infra postgres|rabbitmq|redis` (or the official images' commands `rabbitmq-server`,
# `redis-server`, so docker/compose.yaml gives the same command to either image).
set -eu
case "${1:-}" in
  postgres)
    bin=/usr/lib/postgresql/15/bin
    data=/var/lib/postgresql/data
    mkdir -p "$data" /run/postgresql
    chown -R postgres:postgres /var/lib/postgresql /run/postgresql
    if [ ! -s "$data/PG_VERSION" ]; then
      runuser -u postgres -- "$bin/initdb" -D "$data" --auth=trust --username=postgres >/dev/null
      echo "listen_addresses = '*'" >>"$data/postgresql.conf"
      echo "max_connections = 200" >>"$data/postgresql.conf"
      echo "host all all 0.0.0.0/0 trust" >>"$data/pg_hba.conf"
    fi
    exec runuser -u postgres -- "$bin/postgres" -D "$data"
    ;;
  rabbitmq | rabbitmq-server)
    printf 'loopback_users = none\nlisteners.tcp.default = 5672\n' >/etc/rabbitmq/rabbitmq.conf
    mkdir -p /var/lib/rabbitmq /var/log/rabbitmq
    chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
    export HOME=/var/lib/rabbitmq RABBITMQ_LOGS=-
    exec runuser -u rabbitmq -- /usr/sbin/rabbitmq-server
    ;;
  redis | redis-server)
    exec runuser -u redis -- redis-server --bind 0.0.0.0 --protected-mode no --save '' --appendonly no
    ;;
  *)
    echo "usage: osc-infra postgres|rabbitmq|redis (got '${1:-}')" >&2
    exit 64
    ;;
esac
