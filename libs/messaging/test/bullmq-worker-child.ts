/**
 * A job worker process that dies in the middle of a job: it reports the job to its parent (IPC)
 * and hangs until the parent kills it. Run by bullmq-job-queue.int-spec.ts.
 */
import { BullMqJobQueue } from '../src/bullmq-job-queue';

async function main(): Promise<void> {
  const [url, prefix, queue] = process.argv.slice(2);
  if (!url || !prefix || !queue) throw new Error('usage: bullmq-worker-child <redis url> <prefix> <queue>');
  const jobs = new BullMqJobQueue({
    url,
    prefix,
    lockDurationMs: 1000,
    stalledIntervalMs: 300,
    logger: { warn: () => undefined, error: () => undefined },
  });
  await jobs.process(queue, async (job) => {
    process.send?.({ job });
    await new Promise(() => undefined); // never finishes: the parent kills us here
  });
  process.send?.({ ready: true });
}

main().catch((e: unknown) => {
  process.send?.({ error: String(e) });
  process.exit(2);
});
