#!/bin/sh
# Runs docker/compose.yaml on this machine without an image registry, and the smoke test against it
# (docs/deploy.md, "Compose"):
#
#   1. docker/local-image.sh: the local base image (debootstrap + this machine's Node.js) and the
#      product image localhost/osc:dev built from docker/Dockerfile on it;
#   2. localhost/osc-infra:dev from docker/infra.Containerfile: PostgreSQL, RabbitMQ and Redis from
#      Debian's packages, standing in for the official images compose.yaml names by default;
#   3. podman-compose up with those images and free host ports; the time until every app answers
#      /readyz is printed;
#   4. node docker/smoke.mjs against the published ports, then a restart of workflow-api's container
#      timed to /readyz (start-up of one app on a migrated database);
#   5. podman-compose down -v (OSC_KEEP=1 keeps the stack running).
#
# Needs root, podman, podman-compose and debootstrap (`apt-get install podman podman-compose
# debootstrap runc`). Prints one JSON line `compose-local` with the timings and image sizes.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=${OSC_BASE_WORK:-/var/tmp/osc-base}
project=${OSC_COMPOSE_PROJECT:-osc-local}

sh "$root/docker/local-image.sh"
# local-image.sh wrote this machine's podman settings (runc, limits): use them here too.
if [ "${OSC_CONTAINERS_CONF-unset}" = unset ]; then export CONTAINERS_CONF="$work/containers.conf"; fi
base=${OSC_BASE_IMAGE:-localhost/osc-node20:bookworm}
export OSC_IMAGE=${OSC_IMAGE:-localhost/osc:dev}
infra=${OSC_INFRA_IMAGE:-localhost/osc-infra:dev}
printf '%s compose-local: building %s\n' "$(date -u +%H:%M:%S)" "$infra" >&2
podman build --network host --build-arg BASE_IMAGE="$base" -f "$root/docker/infra.Containerfile" -t "$infra" "$root" >&2
export OSC_POSTGRES_IMAGE="$infra" OSC_RABBITMQ_IMAGE="$infra" OSC_REDIS_IMAGE="$infra"

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
for v in OSC_WORKFLOW_API_PORT OSC_VOLUME_API_PORT OSC_WORKFLOW_ENGINE_PORT OSC_CRON_SCHEDULER_PORT OSC_SCHEDULER_STATS_PORT OSC_BACKUP_WORKER_PORT; do
  eval "[ -n \"\${$v:-}\" ] || $v=\$(free_port)"
  export "$v"
done

compose() { podman-compose -p "$project" -f "$root/docker/compose.yaml" "$@"; }
cleanup() { [ "${OSC_KEEP:-}" = 1 ] || compose down -v >/dev/null 2>&1 || true; }
trap cleanup EXIT

printf '%s compose-local: starting the stack (project %s)\n' "$(date -u +%H:%M:%S)" "$project" >&2
t0=$(date +%s%N)
compose up -d >&2
for p in $OSC_WORKFLOW_API_PORT $OSC_VOLUME_API_PORT $OSC_WORKFLOW_ENGINE_PORT $OSC_CRON_SCHEDULER_PORT $OSC_SCHEDULER_STATS_PORT $OSC_BACKUP_WORKER_PORT; do
  n=0
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/readyz")" = 200 ]; do
    n=$((n + 1))
    if [ "$n" -gt 600 ]; then compose ps >&2; compose logs >&2 || true; echo "compose-local: port $p not ready in 5 min" >&2; exit 1; fi
    sleep 0.5
  done
done
ready_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
printf '%s compose-local: every app ready %s ms after `up`; running docker/smoke.mjs\n' "$(date -u +%H:%M:%S)" "$ready_ms" >&2
smoke=$(node "$root/docker/smoke.mjs") || { echo "$smoke"; compose logs >&2 || true; exit 1; }
# Start-up of one app from the image on a migrated database: restart workflow-api's container.
t1=$(date +%s%N)
podman restart "${project}_workflow-api_1" >/dev/null
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$OSC_WORKFLOW_API_PORT/readyz")" = 200 ]; do sleep 0.1; done
restart_ms=$(( ($(date +%s%N) - t1) / 1000000 ))
size() { podman image inspect --format '{{.Size}}' "$1"; }
printf '{"compose-local":"passed","readyMs":%s,"workflowApiRestartMs":%s,"imageBytes":%s,"infraImageBytes":%s,"baseImageBytes":%s,"loadavg":"%s","smoke":%s}\n' \
  "$ready_ms" "$restart_ms" "$(size "$OSC_IMAGE")" "$(size "$infra")" "$(size "$base")" "$(cut -d' ' -f1-3 /proc/loadavg)" "$smoke"
