'use strict';
// HEALTHCHECK of the image: healthy when one of the product's ports answers GET /healthz with 200.
// The check does not know which app the container runs, so it asks each app's port (the same
// variables and defaults as the apps' configuration); embedded mode answers on both API ports.
const ports = [
  ['WORKFLOW_API_PORT', 8989],
  ['VOLUME_API_PORT', 8776],
  ['WORKFLOW_ENGINE_HEALTH_PORT', 9101],
  ['CRON_SCHEDULER_HEALTH_PORT', 9102],
  ['SCHEDULER_STATS_HEALTH_PORT', 9103],
  ['BACKUP_WORKER_HEALTH_PORT', 9104],
].map(([name, port]) => Number(process.env[name] || port));

const probe = (port) =>
  fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
    (res) => res.status === 200,
    () => false,
  );

Promise.all(ports.map(probe)).then((answers) => process.exit(answers.some(Boolean) ? 0 : 1));
