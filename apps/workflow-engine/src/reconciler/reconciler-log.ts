/** One structured log line of the reconciler, the heartbeats or the dead-letter handling. */
export type ReconcilerLog = (level: 'warn' | 'error', msg: string, fields: Record<string, unknown>) => void;

/** Default: one JSON line on stderr, naming the execution, task and action ids in its fields. */
export const jsonLineLog: ReconcilerLog = (level, msg, fields) => {
  process.stderr.write(
    `${JSON.stringify({ level, time: new Date().toISOString(), app: 'workflow-engine', msg, ...fields })}\n`,
  );
};
