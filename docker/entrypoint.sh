#!/bin/sh
# Start one app of the product from its bundle: `osc-entrypoint <app>`, or the APP variable (node
# flags: NODE_OPTIONS). Run from the image's /app, or from a checkout after `npm run build`.
# `osc-entrypoint migrate` applies every app's database migrations to DATABASE_URL and exits (the
# Kubernetes migration Job, the compose stack's `migrate` service).
# exec: node is PID 1 and gets SIGTERM itself (every main.ts closes cleanly on it).
set -eu
app="${1:-${APP:-}}"
if [ "$app" = migrate ]; then
  exec node --enable-source-maps dist/apps/embedded/main.js migrate
fi
case "$app" in
  workflow-api | volume-api | workflow-engine | cron-scheduler | scheduler-stats | backup-worker | embedded) ;;
  *)
    echo "usage: osc-entrypoint <app>, one of: workflow-api volume-api workflow-engine cron-scheduler scheduler-stats backup-worker embedded, or migrate (got '${app}')" >&2
    exit 64
    ;;
esac
exec node --enable-source-maps "dist/apps/${app}/main.js"
