#!/usr/bin/env bash
# Run the upstream tempest suites against our two services through a real Keystone (issue #9).
# Not part of CI: it installs Debian packages and takes a long time. See tools/tempest/README.md.
#
#   tools/tempest/run.sh [mistral] [volume] [volume-multibackend]   (default: all three)
#
# The product waits up to 30 s for Keystone (KEYSTONE_TIMEOUT_MS): Keystone under uWSGI on a loaded
# 2-core machine sometimes takes longer than the default 5 s, which the services answer with 503.
# env: TEMPEST_CONCURRENCY (default 2; keep 1-2 on a small machine), WORKFLOW_API_PORT (8989),
#      VOLUME_API_PORT (8776), KEYSTONE_PORT (a free one), TEMPEST_KEEP=1 (keep the work dir),
#      TEMPEST_REGEX_MISTRAL / TEMPEST_REGEX_VOLUME / TEMPEST_REGEX_MULTIBACKEND (narrow a suite),
#      TEMPEST_WORK (work dir).
#
# Steps: install what is missing; start Keystone (tools/keystone/start.sh: PostgreSQL database,
# Fernet tokens) on loopback; create the service user and catalog entries (keystone_setup.py);
# start the product (`npm start`, AUTH_MODE=keystone) with a fresh data dir; copy the mistral
# resources into the plugin; write tempest.conf; run each suite; summarize into
# tools/tempest/results/; stop everything and remove what it made.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
results="${TEMPEST_RESULTS_DIR:-$here/results}"   # TEMPEST_RESULTS_DIR: partial runs elsewhere
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(mistral volume volume-multibackend)
concurrency=${TEMPEST_CONCURRENCY:-2}
wf_port=${WORKFLOW_API_PORT:-8989}
vol_port=${VOLUME_API_PORT:-8776}
py=/usr/bin/python3
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"   # Debian's python and tempest, not a pyenv shim

log() { printf '[tempest %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# --- 1. packages -------------------------------------------------------------------------------
need=()
for p in keystone uwsgi-core uwsgi-plugin-python3 python3-psycopg2 postgresql-client curl \
  tempest mistral-tempest-plugin cinder-tempest-plugin; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  # Keystone's own service must not start: Debian asks policy-rc.d, which must answer 101.
  apt_prefix=()
  [ "$(id -u)" = 0 ] || apt_prefix=(sudo)
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | "${apt_prefix[@]}" tee /usr/sbin/policy-rc.d >/dev/null
    "${apt_prefix[@]}" chmod +x /usr/sbin/policy-rc.d
    made_policy_rc=1
  fi
  "${apt_prefix[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2
  [ -z "${made_policy_rc:-}" ] || "${apt_prefix[@]}" rm -f /usr/sbin/policy-rc.d
fi

for port in "$wf_port" "$vol_port"; do
  if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
    log "port $port is in use: stop what listens there or set WORKFLOW_API_PORT / VOLUME_API_PORT"
    exit 2
  fi
done

work=${TEMPEST_WORK:-$(mktemp -d /tmp/osc-tempest.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
ks_dir="$work/keystone"
product_pid=""
resources=$($py -c 'import os, mistral_tempest_tests as m; print(os.path.join(os.path.dirname(m.__file__), "tests", "resources"))')
copied_resources=""
registered_ws=""

cleanup() {
  set +e
  if [ -n "$product_pid" ]; then
    log "stopping the product (process group $product_pid)"
    kill -TERM -- "-$product_pid" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "$product_pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$product_pid" 2>/dev/null
  fi
  [ ! -d "$ks_dir" ] || "$repo/tools/keystone/stop.sh" "$ks_dir" --purge
  [ -z "$copied_resources" ] || rm -rf "$resources"
  [ -z "$registered_ws" ] || tempest workspace remove --name "$ws_name" >/dev/null 2>&1
  if [ -z "${TEMPEST_KEEP:-}" ]; then rm -rf "$work"; else log "kept $work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 2. Keystone -------------------------------------------------------------------------------
ks_port=${KEYSTONE_PORT:-$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
admin_password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
svc_password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
log "starting Keystone on 127.0.0.1:$ks_port"
KEYSTONE_ADMIN_PASSWORD="$admin_password" "$repo/tools/keystone/start.sh" "$ks_dir" "$ks_port" >/dev/null
ks_url="http://127.0.0.1:$ks_port"
$py "$here/keystone_setup.py" "$ks_url" "$admin_password" osc-service "$svc_password" "$wf_port" "$vol_port" >&2

# --- 3. the product ----------------------------------------------------------------------------
# mistral-tempest-plugin 1.3.0 predates upstream's change of `workflows:publicize` to admin-only
# (Mistral bug 2147178, which our default follows): its test_delete_wf_with_trigger_associate_in_other_tenant
# has a member create a public workflow. Deploy with the rule the suite was written for.
cat >"$work/workflow-policy.yaml" <<'POLICY'
"workflows:publicize": "rule:admin_or_owner"
POLICY
# The volume suite runs on one back end, as upstream's default gate; the multi-backend classes
# (volume-multibackend) run on a product restarted with two back ends, as upstream's separate
# multi-backend job: with two back ends, tests that add a volume placed anywhere to a group placed
# on one back end fail (Cinder refuses members on another back end too).
product_backends=""
start_product() {
  product_backends=$1
  log "starting the product (embedded, AUTH_MODE=keystone, back ends $1) with data in $work/data"
  (
    cd "$repo"
    exec env AUTH_MODE=keystone KEYSTONE_AUTH_URL="$ks_url/v3" KEYSTONE_USERNAME=osc-service \
      KEYSTONE_PASSWORD="$svc_password" KEYSTONE_PROJECT_NAME=service KEYSTONE_TIMEOUT_MS=30000 \
      WORKFLOW_API_ALLOW_ACTION_EXECUTION_DELETION=true WORKFLOW_API_POLICY_FILE="$work/workflow-policy.yaml" \
      VOLUME_BACKENDS="$1" \
      DATA_DIR="$work/data" WORKFLOW_API_PORT="$wf_port" WORKFLOW_API_HOST=127.0.0.1 \
      VOLUME_API_PORT="$vol_port" VOLUME_API_HOST=127.0.0.1 LOG_LEVEL="${LOG_LEVEL:-info}" \
      setsid node -r @swc-node/register apps/embedded/src/main.ts
  ) >>"$work/product.log" 2>&1 </dev/null &
  product_pid=$!
  for _ in $(seq 1 240); do
    if curl -fs -o /dev/null "http://127.0.0.1:$wf_port/healthz" && curl -fs -o /dev/null "http://127.0.0.1:$vol_port/healthz"; then
      break
    fi
    kill -0 "$product_pid" 2>/dev/null || { log "the product exited:"; tail -30 "$work/product.log" >&2; exit 4; }
    sleep 0.5
  done
  curl -fs -o /dev/null "http://127.0.0.1:$vol_port/healthz" || { log "the product did not answer in 120 s"; tail -30 "$work/product.log" >&2; exit 4; }
  # A volume needs a pool: wait until the back ends have reported their capacity.
  sleep 5
}
stop_product() {
  [ -n "$product_pid" ] || return 0
  log "stopping the product (process group $product_pid)"
  kill -TERM -- "-$product_pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$product_pid" 2>/dev/null || break; sleep 0.25; done
  kill -KILL -- "-$product_pid" 2>/dev/null || true
  product_pid=""
}
start_product file

# --- 4. mistral resources ----------------------------------------------------------------------
if [ ! -d "$resources" ]; then
  log "copying the mistral-tempest-plugin resources into $resources"
  cp -r "$repo/../shared/tempest/mistral-resources" "$resources"
  copied_resources=1
fi

# --- 5. tempest workspace and configuration ----------------------------------------------------
# A unique workspace name: tempest keeps a registry of them in ~/.tempest/workspace.yaml.
ws_name="osc-$(basename "$work")"
tempest init --name "$ws_name" "$work/ws" >/dev/null
registered_ws=1
write_conf() {  # $1: back-end names (comma-separated), $2: multi_backend true|false
cat >"$work/ws/etc/tempest.conf" <<CONF
[DEFAULT]
log_file = $work/ws/tempest.log
debug = false

[auth]
use_dynamic_credentials = true
create_isolated_networks = false
admin_username = admin
admin_password = $admin_password
admin_project_name = admin
admin_domain_name = Default
default_credentials_domain_name = Default

[identity]
uri_v3 = $ks_url/v3
auth_version = v3
region = RegionOne

[identity-feature-enabled]
api_v2 = false

[service_available]
cinder = true
mistral = true
nova = false
glance = false
neutron = false
swift = false
horizon = false
barbican = false

[validation]
run_validation = false

[volume]
catalog_type = volumev3
endpoint_type = publicURL
region = RegionOne
build_interval = 1
build_timeout = 120
min_microversion = 3.0
max_microversion = 3.71
backend_names = $1
storage_protocol = file
vendor_name = Open Source
volume_size = 1
manage_volume_ref = source-name,volume-%s
manage_snapshot_ref = source-name,snapshot-%s

[volume-feature-enabled]
multi_backend = $2
backup = true
snapshot = true
clone = true
manage_snapshot = true
manage_volume = true
extend_attached_volume = false
extend_attached_encrypted_volume = false
api_extensions = all
consistency_group = true
volume_revert = true

[mistral_api]
service_api_supported = true
CONF
}

# --- 6. the suites -----------------------------------------------------------------------------
mkdir -p "$results"
status=0
# The classes that need two back ends; the volume suite leaves them to volume-multibackend.
multi_classes='tempest\.api\.volume\.admin\.(test_multi_backend\.VolumeMultiBackendTest|test_volume_retype\.VolumeRetypeWithMigrationTest)\.'
for suite in "${suites[@]}"; do
  exclude=()
  backends=file
  case "$suite" in
    mistral) regex=${TEMPEST_REGEX_MISTRAL:-'^mistral_tempest_tests\.tests\.api\.'} ;;
    volume)
      regex=${TEMPEST_REGEX_VOLUME:-'^(tempest\.api\.volume|cinder_tempest_plugin\.api)\.'}
      exclude=(--exclude-regex "^$multi_classes") ;;
    volume-multibackend)
      regex=${TEMPEST_REGEX_MULTIBACKEND:-"^$multi_classes"}
      backends=file,file2 ;;
    *) log "unknown suite $suite (mistral, volume, volume-multibackend)"; exit 2 ;;
  esac
  if [ "$backends" != "$product_backends" ]; then
    stop_product
    start_product "$backends"
  fi
  if [ "$backends" = file ]; then write_conf file false; else write_conf "$backends" true; fi
  log "running $suite ($regex, concurrency $concurrency)"
  started=$(date +%s)
  (cd "$work/ws" && tempest run --regex "$regex" "${exclude[@]}" --concurrency "$concurrency" --subunit) \
    >"$work/$suite.subunit" 2>"$work/$suite.stderr" || true
  took=$(( $(date +%s) - started ))
  $py "$here/summarize.py" "$suite" "$work/$suite.subunit" "$results" || status=1
  gzip -9c "$work/$suite.subunit" >"$results/$suite.subunit.gz"
  log "$suite took ${took}s"
done
{
  echo "run: $(date -u +%Y-%m-%dT%H:%MZ), embedded mode, concurrency $concurrency"
  echo "tempest $(dpkg-query -W -f='${Version}' tempest), mistral-tempest-plugin $(dpkg-query -W -f='${Version}' mistral-tempest-plugin), cinder-tempest-plugin $(dpkg-query -W -f='${Version}' cinder-tempest-plugin), keystone $(dpkg-query -W -f='${Version}' keystone)"
  for suite in "${suites[@]}"; do head -1 "$results/$suite.summary.txt"; done
  # Issue 9: no token or password in the product's log of a whole run. Keystone's Fernet tokens all
  # begin with gAAAAA; the two passwords are the ones this script generated.
  leaks=$(grep -c -e 'gAAAAA' -e "$admin_password" -e "$svc_password" "$work/product.log" || true)
  echo "product log: $(wc -l <"$work/product.log") lines, $leaks containing a token or a password"
} >"$results/last-run.txt"
[ "$(grep -c ', 0 containing a token' "$results/last-run.txt")" = 1 ] || { log "secrets found in the product log"; status=1; }
cat "$results/last-run.txt"
# The product's log, for the failures' diagnosis (never committed: results/.gitignore).
cp "$work/product.log" "$results/product.log"
exit $status
