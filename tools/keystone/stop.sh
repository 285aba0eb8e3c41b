#!/usr/bin/env bash
# Stop the Keystone that start.sh started in DIR (its process group only); data stays unless --purge.
set -euo pipefail
dir=${1:?usage: stop.sh DIR [--purge]}
pidfile="$dir/keystone.pid"
if [ -f "$pidfile" ]; then
  pid=$(cat "$pidfile")
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$pidfile"
fi
if [ "${2:-}" = "--purge" ]; then
  if [ -f "$dir/database" ]; then
    psql "${KEYSTONE_PG:-postgresql://postgres@127.0.0.1:5432}/postgres" -qtA -c "DROP DATABASE IF EXISTS $(cat "$dir/database") WITH (FORCE)" || true
  fi
  rm -rf "$dir"
fi
