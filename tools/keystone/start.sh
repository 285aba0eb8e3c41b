#!/usr/bin/env bash
# Start a private Keystone (Debian package `keystone`) on loopback for tests and the tempest run:
# its own config, SQLite database, Fernet keys and logs under one directory; never port 5000 unless
# asked. Prints `KEYSTONE_URL=...` and `KEYSTONE_PID=...` on success.
#
#   tools/keystone/start.sh DIR PORT            (env: KEYSTONE_ADMIN_PASSWORD, KEYSTONE_TOKEN_EXPIRATION)
#   tools/keystone/stop.sh DIR
#
# The database is PostgreSQL (KEYSTONE_PG, default postgresql://postgres@127.0.0.1:5432, trust auth):
# Keystone on SQLite under uWSGI fails with "database is locked" as soon as two requests overlap.
# Each start gets its own database `osc_keystone_<random>`, cloned from a template database made by
# `db_sync` once per Keystone version (the migrations take most of the start-up time); bootstrap
# runs on every start. stop.sh --purge drops the database.
set -euo pipefail

dir=${1:?usage: start.sh DIR PORT}
port=${2:?usage: start.sh DIR PORT}
admin_password=${KEYSTONE_ADMIN_PASSWORD:?set KEYSTONE_ADMIN_PASSWORD}
expiration=${KEYSTONE_TOKEN_EXPIRATION:-3600}
pg=${KEYSTONE_PG:-postgresql://postgres@127.0.0.1:5432}

for bin in keystone-manage uwsgi curl psql; do
  command -v "$bin" >/dev/null || { echo "missing $bin: apt-get install -y keystone uwsgi-core uwsgi-plugin-python3 curl" >&2; exit 3; }
done
[ -x /usr/bin/keystone-wsgi-public ] || { echo "missing /usr/bin/keystone-wsgi-public (Debian package keystone)" >&2; exit 3; }

mkdir -p "$dir"/fernet-keys "$dir"/credential-keys "$dir"/log
dir=$(cd "$dir" && pwd)
conf="$dir/keystone.conf"
dbname="osc_keystone_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
echo "$dbname" >"$dir/database"
user=$(id -un)
group=$(id -gn)

cat >"$conf" <<CONF
[DEFAULT]
log_file = $dir/log/keystone.log
debug = false
[database]
connection = $pg/$dbname
[token]
provider = fernet
expiration = $expiration
[fernet_tokens]
key_repository = $dir/fernet-keys
[fernet_receipts]
key_repository = $dir/fernet-keys
[credential]
key_repository = $dir/credential-keys
[identity]
# bcrypt's minimum cost: these are throwaway test users, and the default cost is slow on small machines
password_hash_rounds = 4
[cache]
enabled = false
[oslo_policy]
enforce_new_defaults = false
CONF

manage() { keystone-manage --config-file "$conf" "$@" >>"$dir/log/manage.log" 2>&1; }

version=$(dpkg-query -W -f='${Version}' keystone 2>/dev/null || echo unknown)
template="osc_keystone_template_$(echo "$version" | tr -c 'A-Za-z0-9\n' '_')"
sql() { psql "$pg/postgres" -v ON_ERROR_STOP=1 -qtA -c "$1"; }
if [ "$(sql "SELECT 1 FROM pg_database WHERE datname = '$template'")" != "1" ]; then
  # Build under a temporary name and rename, so a concurrent or interrupted start never sees half a template.
  building="${template}_$$"
  sql "CREATE DATABASE $building"
  sed "s|^connection = .*|connection = $pg/$building|" "$conf" >"$dir/template.conf"
  keystone-manage --config-file "$dir/template.conf" db_sync >>"$dir/log/manage.log" 2>&1
  sql "ALTER DATABASE $building RENAME TO $template" 2>/dev/null || sql "DROP DATABASE $building"
fi
sql "CREATE DATABASE $dbname TEMPLATE $template"
manage fernet_setup --keystone-user "$user" --keystone-group "$group"
manage credential_setup --keystone-user "$user" --keystone-group "$group"
manage bootstrap --bootstrap-password "$admin_password" \
  --bootstrap-admin-url "http://127.0.0.1:$port/v3" --bootstrap-public-url "http://127.0.0.1:$port/v3" \
  --bootstrap-internal-url "http://127.0.0.1:$port/v3" --bootstrap-region-id RegionOne

OS_KEYSTONE_CONFIG_FILES="$conf" setsid uwsgi --plugin python3 --http-socket "127.0.0.1:$port" \
  --wsgi-file /usr/bin/keystone-wsgi-public --master --processes 2 --threads 2 --die-on-term \
  --need-app --disable-logging --add-header "Connection: close" --logto "$dir/log/uwsgi.log" </dev/null >/dev/null 2>&1 &
pid=$!
echo "$pid" >"$dir/keystone.pid"

for _ in $(seq 1 240); do
  if curl -fsS -o /dev/null 2>/dev/null "http://127.0.0.1:$port/v3"; then
    echo "KEYSTONE_URL=http://127.0.0.1:$port"
    echo "KEYSTONE_PID=$pid"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "keystone exited; see $dir/log/uwsgi.log" >&2
    tail -20 "$dir/log/uwsgi.log" >&2 || true
    exit 4
  fi
  sleep 0.25
done
echo "keystone did not answer on 127.0.0.1:$port within 60 s; see $dir/log" >&2
kill -TERM -- "-$pid" 2>/dev/null || true
exit 5
