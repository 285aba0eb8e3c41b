import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ReceivedCall } from './counting-server';
import { RETRIED_TASKS, type RestoreRecord, sha256File } from './load';

/** Anything that runs SQL: a TypeORM DataSource over PostgreSQL or PGlite. */
export interface Sql {
  query(sql: string, params?: unknown[]): Promise<any[]>;
}

/** A SIGKILL the bench sent, and the app it hit (`embedded` in embedded mode). */
export interface KillEvent {
  readonly at: number;
  readonly slot: string;
  readonly app: string;
}

const TERMINAL = new Set(['SUCCESS', 'ERROR', 'CANCELLED']);
/** Statuses a resource only passes through while a job works on it (the domain's tables; stable and error ones excluded). */
export const TRANSITIONAL = {
  volume: [
    'creating',
    'attaching',
    'detaching',
    'deleting',
    'backing-up',
    'restoring-backup',
    'extending',
    'downloading',
    'uploading',
    'retyping',
    'reverting',
    'managing',
    'unmanaging',
    'maintenance',
  ],
  snapshot: ['creating', 'deleting', 'backing-up', 'restoring', 'unmanaging'],
  backup: ['creating', 'deleting', 'restoring'],
} as const;

export interface CallVerdict {
  /** Distinct (execution, task, item) keys with at least one action execution. */
  keys: number;
  actionExecutions: number;
  calls: number;
  /** Calls beyond one per action execution, with a kill of an action-running process between the first and the last call of the key. */
  duplicatedExplained: number;
  /** Calls beyond one per action execution that no kill explains. */
  duplicatedUnexplained: number;
  /** Action executions in SUCCESS without a 200 call to back them. */
  missing: number;
  examples: string[];
}

export interface Verdict {
  executions: {
    total: number;
    terminal: number;
    lost: number;
    byState: Record<string, number>;
    lostExamples: string[];
    errorExamples: string[];
  };
  tasksStuck: number;
  calls: CallVerdict;
  retriedCalls: CallVerdict;
  cron: { triggers: number; executions: number; maxPerTriggerMinute: number; firedTwice: number };
  volumes: { ok: number; stuck: number; byStatus: Record<string, number> };
  snapshots: { ok: number; stuck: number; byStatus: Record<string, number> };
  backups: {
    ok: number;
    stuck: number;
    byStatus: Record<string, number>;
    errorReasons: Record<string, number>;
  };
  quota: { drift: number; reservedLeft: number; details: string[] };
  restores: {
    recorded: number;
    checked: number;
    notAvailable: number;
    shaMismatches: number;
    details: string[];
  };
  failures: string[];
}

/**
 * Judges a chaos run from the database and the counting server's log, never from what the load
 * generator believed: every execution terminal, one call per action execution, no block-storage
 * resource in a transitional status, quota usage equal to a recount from the rows, restored bytes
 * equal to their source.
 */
export async function judge(
  db: Sql,
  input: {
    calls: readonly ReceivedCall[];
    kills: readonly KillEvent[];
    /** Apps whose death can interrupt a running action (the executor's host). */
    actionApps: ReadonlySet<string>;
    restores: readonly RestoreRecord[];
    volumeDir: string;
    project: string;
  },
): Promise<Verdict> {
  const failures: string[] = [];

  const ex: {
    id: string;
    state: string;
    workflow_name: string;
    state_info: string | null;
    description: string;
  }[] = await db.query(
    `SELECT "id", "state", "workflow_name", "state_info", "description" FROM "workflow_executions"`,
  );
  const byState: Record<string, number> = {};
  for (const e of ex) byState[e.state] = (byState[e.state] ?? 0) + 1;
  const lost = ex.filter((e) => !TERMINAL.has(e.state));
  const errored = ex.filter((e) => e.state === 'ERROR');
  const executions = {
    total: ex.length,
    terminal: ex.length - lost.length,
    lost: lost.length,
    byState,
    lostExamples: lost.slice(0, 5).map((e) => `${e.id} ${e.workflow_name} ${e.state}`),
    errorExamples: errored
      .slice(0, 5)
      .map((e) => `${e.id} ${e.workflow_name}: ${(e.state_info ?? '').slice(0, 300)}`),
  };
  if (lost.length > 0) {
    // Where each of the first lost executions stopped: its unfinished tasks and their action executions.
    for (const [i, e] of lost.slice(0, 5).entries()) {
      const tasks: { name: string; state: string; actions: string | null }[] = await db.query(
        `SELECT t."name", t."state", string_agg(a."state" || coalesce('#' || a."item_index", ''), ',') AS "actions"
           FROM "task_executions" t LEFT JOIN "action_executions" a ON a."task_execution_id" = t."id"
          WHERE t."workflow_execution_id" = $1 AND t."state" NOT IN ('SUCCESS', 'ERROR', 'CANCELLED') GROUP BY 1, 2`,
        [e.id],
      );
      const where = tasks
        .map((t) => `task ${t.name} ${t.state} (actions: ${t.actions ?? 'none'})`)
        .join(', ');
      executions.lostExamples[i] += where ? `: ${where}` : ': no unfinished task';
    }
    failures.push(`${lost.length} execution(s) not terminal, e.g. ${executions.lostExamples.join('; ')}`);
  }

  const [{ n: tasksStuck }] = (await db.query(
    `SELECT count(*)::int AS n FROM "task_executions" WHERE "state" NOT IN ('SUCCESS', 'ERROR', 'CANCELLED')`,
  )) as [{ n: number }];
  if (tasksStuck > 0) failures.push(`${tasksStuck} task execution(s) not terminal`);

  // One std.http call per action execution, per (execution, task, item).
  const aes: { key: string; total: number; success: number }[] = await db.query(
    `SELECT "workflow_execution_id"::text || '/' || "task_name" || '/' || coalesce("item_index", 0)::text AS "key",
            count(*)::int AS "total", count(*) FILTER (WHERE "state" = 'SUCCESS')::int AS "success"
       FROM "action_executions" WHERE "name" = 'std.http' AND "workflow_execution_id" IS NOT NULL GROUP BY 1`,
  );
  const callsByKey = new Map<string, ReceivedCall[]>();
  for (const c of input.calls) callsByKey.set(c.key, [...(callsByKey.get(c.key) ?? []), c]);
  const emptyCalls = (): CallVerdict => ({
    keys: 0,
    actionExecutions: 0,
    calls: 0,
    duplicatedExplained: 0,
    duplicatedUnexplained: 0,
    missing: 0,
    examples: [],
  });
  const plain = emptyCalls();
  const retried = emptyCalls();
  const seen = new Set<string>();
  const killsOfActionApps = input.kills.filter((k) => input.actionApps.has(k.app));
  for (const a of aes) {
    seen.add(a.key);
    const v = RETRIED_TASKS.has(a.key.split('/')[1] ?? '') ? retried : plain;
    const calls = callsByKey.get(a.key) ?? [];
    v.keys += 1;
    v.actionExecutions += a.total;
    v.calls += calls.length;
    const extra = calls.length - a.total;
    if (extra > 0) {
      const first = calls[0]!.at;
      const last = calls[calls.length - 1]!.at;
      const explained = killsOfActionApps.some((k) => k.at >= first && k.at <= last);
      if (explained) v.duplicatedExplained += extra;
      else v.duplicatedUnexplained += extra;
      if (v.examples.length < 8)
        v.examples.push(
          `${a.key}: ${calls.length} calls for ${a.total} action execution(s)${explained ? ' (a kill fell between them)' : ''}`,
        );
    }
    const ok = calls.filter((c) => c.status === 200).length;
    if (a.success > ok) {
      v.missing += a.success - ok;
      if (v.examples.length < 8)
        v.examples.push(`${a.key}: ${a.success} SUCCESS action execution(s), ${ok} answered call(s)`);
    }
  }
  // Calls with no action execution row at all (the row vanished or never committed).
  for (const [key, calls] of callsByKey) {
    if (seen.has(key)) continue;
    const v = RETRIED_TASKS.has(key.split('/')[1] ?? '') ? retried : plain;
    v.calls += calls.length;
    v.duplicatedUnexplained += calls.length;
    if (v.examples.length < 8) v.examples.push(`${key}: ${calls.length} call(s) and no action execution`);
  }
  for (const [label, v] of [
    ['std.http', plain],
    ['retried std.http', retried],
  ] as const) {
    if (v.duplicatedUnexplained > 0)
      failures.push(`${label}: ${v.duplicatedUnexplained} duplicated call(s) no kill explains`);
    if (v.missing > 0) failures.push(`${label}: ${v.missing} SUCCESS action execution(s) without a call`);
  }

  // Cron: never twice for the same trigger and minute.
  const cronRows = ex.filter((e) => e.description.includes('"cron_trigger"'));
  const cronExec: { trigger: string; minute: string; n: number }[] = cronRows.length
    ? await db.query(
        `SELECT ("description"::jsonb -> 'triggered_by' ->> 'id') AS "trigger", date_trunc('minute', "created_at")::text AS "minute", count(*)::int AS "n"
           FROM "workflow_executions" WHERE "description" LIKE '%"cron_trigger"%' GROUP BY 1, 2`,
      )
    : [];
  const maxPer = cronExec.reduce((m, r) => Math.max(m, r.n), 0);
  const cron = {
    triggers: new Set(cronExec.map((r) => r.trigger)).size,
    executions: cronRows.length,
    maxPerTriggerMinute: maxPer,
    firedTwice: cronExec.reduce((s, r) => s + Math.max(0, r.n - 1), 0),
  };
  if (cron.firedTwice > 0)
    failures.push(`cron: ${cron.firedTwice} extra firing(s) within one trigger-minute`);

  // Block storage: nothing left in a transitional status.
  const statusCount = async (table: string, transitional: readonly string[]) => {
    const rows: { status: string; n: number }[] = await db.query(
      `SELECT "status", count(*)::int AS "n" FROM "${table}" WHERE NOT "deleted" GROUP BY 1`,
    );
    const byStatus: Record<string, number> = {};
    let stuck = 0;
    let ok = 0;
    for (const r of rows) {
      byStatus[r.status] = r.n;
      if (transitional.includes(r.status)) stuck += r.n;
      else ok += r.n;
    }
    if (stuck > 0) failures.push(`${table}: ${stuck} in a transitional status (${JSON.stringify(byStatus)})`);
    return { ok, stuck, byStatus };
  };
  const volumes = await statusCount('volumes', TRANSITIONAL.volume);
  const snapshots = await statusCount('snapshots', TRANSITIONAL.snapshot);
  // Why backups ended in `error` (a kill mid-backup ends it so, as Cinder's restart does): counted by reason.
  const reasonRows: { reason: string | null; n: number }[] = await db.query(
    `SELECT "fail_reason" AS "reason", count(*)::int AS "n" FROM "backups" WHERE NOT "deleted" AND "status" = 'error' GROUP BY 1`,
  );
  const backups = {
    ...(await statusCount('backups', TRANSITIONAL.backup)),
    errorReasons: Object.fromEntries(reasonRows.map((r) => [(r.reason ?? '(none)').slice(0, 300), r.n])),
  };

  // Quota: usage as stored against a recount from the rows (Cinder's counting: volumes and
  // snapshots charge gigabytes and their type's keys; backups charge backups and backup_gigabytes).
  const expected = new Map<string, number>();
  const add = (k: string, n: number) => expected.set(k, (expected.get(k) ?? 0) + n);
  const vols: { type: string | null; n: number; gb: number }[] = await db.query(
    `SELECT t."name" AS "type", count(*)::int AS "n", coalesce(sum(v."size"), 0)::int AS "gb" FROM "volumes" v
       LEFT JOIN "volume_types" t ON t."id" = v."volume_type_id" WHERE NOT v."deleted" AND v."use_quota" AND v."project_id" = $1 GROUP BY 1`,
    [input.project],
  );
  for (const r of vols) {
    add('volumes', r.n);
    add('gigabytes', r.gb);
    if (r.type) {
      add(`volumes_${r.type}`, r.n);
      add(`gigabytes_${r.type}`, r.gb);
    }
  }
  const snaps: { type: string | null; n: number; gb: number }[] = await db.query(
    `SELECT t."name" AS "type", count(*)::int AS "n", coalesce(sum(s."size"), 0)::int AS "gb" FROM "snapshots" s
       LEFT JOIN "volume_types" t ON t."id" = s."volume_type_id" WHERE NOT s."deleted" AND s."use_quota" AND s."project_id" = $1 GROUP BY 1`,
    [input.project],
  );
  for (const r of snaps) {
    add('snapshots', r.n);
    add('gigabytes', r.gb);
    if (r.type) {
      add(`snapshots_${r.type}`, r.n);
      add(`gigabytes_${r.type}`, r.gb);
    }
  }
  const [bk] = (await db.query(
    `SELECT count(*)::int AS "n", coalesce(sum("size"), 0)::int AS "gb" FROM "backups" WHERE NOT "deleted" AND "project_id" = $1`,
    [input.project],
  )) as [{ n: number; gb: number }];
  add('backups', bk.n);
  add('backup_gigabytes', bk.gb);
  const usage: { resource: string; in_use: string; reserved: string }[] = await db.query(
    `SELECT "resource", "in_use"::text, "reserved"::text FROM "quota_usages" WHERE "project_id" = $1`,
    [input.project],
  );
  const stored = new Map(usage.map((u) => [u.resource, Number(u.in_use)]));
  const quota = { drift: 0, reservedLeft: 0, details: [] as string[] };
  for (const resource of new Set([...expected.keys(), ...stored.keys()])) {
    const want = expected.get(resource) ?? 0;
    const have = stored.get(resource) ?? 0;
    if (want !== have) {
      quota.drift += Math.abs(want - have);
      quota.details.push(`${resource}: in_use ${have}, recount ${want}`);
    }
  }
  for (const u of usage) {
    if (Number(u.reserved) !== 0) {
      quota.reservedLeft += Math.abs(Number(u.reserved));
      quota.details.push(`${u.resource}: reserved ${u.reserved} with nothing in flight`);
    }
  }
  if (quota.drift > 0 || quota.reservedLeft > 0) failures.push(`quota: ${quota.details.join('; ')}`);

  // Restores: the restored volume's bytes equal the source's at backup time.
  const restores = {
    recorded: input.restores.length,
    checked: 0,
    notAvailable: 0,
    shaMismatches: 0,
    details: [] as string[],
  };
  for (const r of input.restores) {
    const rows: { status: string; deleted: boolean }[] = await db.query(
      `SELECT "status", "deleted" FROM "volumes" WHERE "id" = $1`,
      [r.restoredVolumeId],
    );
    const row = rows[0];
    if (!row || row.deleted || row.status !== 'available') {
      restores.notAvailable += 1;
      restores.details.push(
        `restore of ${r.backupId} into ${r.restoredVolumeId}: ${row ? row.status : 'no row'}`,
      );
      continue;
    }
    const file = path.join(input.volumeDir, `volume-${r.restoredVolumeId}`);
    const sha = existsSync(file) ? await sha256File(file) : 'missing file';
    restores.checked += 1;
    if (sha !== r.sourceSha256) {
      restores.shaMismatches += 1;
      restores.details.push(
        `restore of ${r.backupId} into ${r.restoredVolumeId}: sha256 ${sha.slice(0, 16)}…, source ${r.sourceSha256.slice(0, 16)}…`,
      );
    }
  }
  if (restores.shaMismatches > 0)
    failures.push(`${restores.shaMismatches} restored volume(s) whose bytes differ from the source`);

  return {
    executions,
    tasksStuck,
    calls: plain,
    retriedCalls: retried,
    cron,
    volumes,
    snapshots,
    backups,
    quota,
    restores,
    failures,
  };
}
