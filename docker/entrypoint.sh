#!/bin/sh
# Start one app of the product: `osc-entrypoint <app>`, or the APP variable (node flags: NODE_OPTIONS).
# exec: node is PID 1 and gets SIGTERM itself (every main.ts closes cleanly on it).
set -eu
app="${1:-${APP:-}}"
case "$app" in
  workflow-api | volume-api | workflow-engine | cron-scheduler | scheduler-stats | backup-worker | embedded) ;;
  *)
    echo "usage: osc-entrypoint <app>, one of: workflow-api volume-api workflow-engine cron-scheduler scheduler-stats backup-worker embedded (got '${app}')" >&2
    exit 64
    ;;
esac
exec node -r @swc-node/register "apps/${app}/src/main.ts"
