import { isMigrating } from '../state/volume-status';
import type { UserMessageRef } from './message-fields';

/** Resources the block-storage reconciler looks after. */
export const RECONCILED_RESOURCES = ['volume', 'snapshot', 'backup', 'group', 'group_snapshot'] as const;
export type ReconciledResource = (typeof RECONCILED_RESOURCES)[number];

/**
 * What a transitional status waits for:
 * - `backend-job`: a job of the back end that owns the row (volume/backup worker);
 * - `holder`: another resource's work (a volume `backing-up` is held by its `creating` backup);
 * - `outside`: an actor this product does not run (the image service for upload/download) or an
 *   API call that never finished; nothing here can drive it on.
 * - `client`: the attaching client (compute) through the attachments API, which may take as long as
 *   it needs (a boot from volume waits for its instance); Cinder never times these states out, and
 *   ending them here would leave the client's attachment behind. Left alone.
 */
export type StuckWaitsFor = 'backend-job' | 'holder' | 'outside' | 'client';

/** `previous`: the status before the operation (`in-use` when the volume is attached, else `available`). */
export type StuckEnd = string;

export interface StuckRule {
  readonly waitsFor: StuckWaitsFor;
  /** A job may be queued again: its handler is idempotent and its inputs are stored (BS-8.6.2). */
  readonly resumable: boolean;
  /** Where the row ends when its work cannot go on: Cinder's error status, or `previous`. */
  readonly endsIn: StuckEnd;
  /** The user message recorded with the end; `detailWhenDown` replaces the detail when the owning worker is down. */
  readonly message: (UserMessageRef & { readonly detailWhenDown?: UserMessageRef['detail'] }) | null;
}

const job = (endsIn: string, message: StuckRule['message'], resumable = true): StuckRule => ({
  waitsFor: 'backend-job',
  resumable,
  endsIn,
  message,
});
const held = (endsIn: string, message: StuckRule['message'] = null): StuckRule => ({
  waitsFor: 'holder',
  resumable: false,
  endsIn,
  message,
});
const outside = (endsIn: string, message: StuckRule['message'] = null): StuckRule => ({
  waitsFor: 'outside',
  resumable: false,
  endsIn,
  message,
});
const client = (endsIn: string): StuckRule => ({
  waitsFor: 'client',
  resumable: false,
  endsIn,
  message: null,
});

/**
 * Every transitional status of every reconciled resource (the statuses of the domain's status
 * tables that are left only by some work finishing), with what it waits for and where it ends.
 * Ends follow the transition tables (`creating → error`, `deleting → error_deleting`, `extending
 * → error_extending`, `restoring-backup → error_restoring`; attach states are left to their client);
 * `unmanaging` has no exit in the tables and ends in
 * `error`, as an admin reset-state would leave it.
 */
export const STUCK_RULES: Readonly<Record<ReconciledResource, Readonly<Record<string, StuckRule>>>> = {
  volume: {
    creating: job('error', {
      action: 'create-volume-from-backend',
      detail: 'driver-failed-create',
      detailWhenDown: 'driver-not-initialized',
    }),
    managing: job('error_managing', {
      action: 'create-volume-from-backend',
      detail: 'unknown-error',
      detailWhenDown: 'driver-not-initialized',
    }),
    deleting: job('error_deleting', {
      action: 'delete-volume',
      detail: 'unknown-error',
      detailWhenDown: 'driver-not-initialized',
    }),
    extending: job('error_extending', {
      action: 'extend-volume',
      detail: 'driver-failed-extend',
      detailWhenDown: 'driver-not-initialized',
    }),
    reverting: job('error', {
      action: 'revert-volume',
      detail: 'unknown-error',
      detailWhenDown: 'driver-not-initialized',
    }),
    unmanaging: job('error', {
      action: 'unmanage-volume',
      detail: 'unknown-error',
      detailWhenDown: 'driver-not-initialized',
    }),
    'backing-up': held('previous'),
    'restoring-backup': held('error_restoring', { action: 'backup-restore', detail: 'backup-restore-error' }),
    downloading: outside('error', { action: 'copy-image-to-volume', detail: 'unknown-error' }),
    uploading: outside('previous', { action: 'copy-volume-to-image', detail: 'failed-to-upload-volume' }),
    // what an admin's os-unreserve / os-roll_detaching would do, if anyone asked
    attaching: client('available'),
    reserved: client('available'),
    detaching: client('in-use'),
    retyping: outside('previous', { action: 'migrate-volume', detail: 'unknown-error' }),
    maintenance: outside('available', { action: 'migrate-volume', detail: 'unknown-error' }),
  },
  snapshot: {
    creating: job('error', {
      action: 'snapshot-create',
      detail: 'snapshot-create-error',
      detailWhenDown: 'driver-not-initialized',
    }),
    deleting: job('error_deleting', {
      action: 'snapshot-delete',
      detail: 'snapshot-delete-error',
      detailWhenDown: 'driver-not-initialized',
    }),
    unmanaging: job('error', {
      action: 'snapshot-delete',
      detail: 'unknown-error',
      detailWhenDown: 'driver-not-initialized',
    }),
    'backing-up': held('available'),
    restoring: held('available'),
  },
  backup: {
    // BS-8.3.6: an interrupted backup is not resumed but failed (its source is released); an
    // interrupted restore ends with the backup available and its target volume error_restoring.
    creating: job(
      'error',
      {
        action: 'backup-create',
        detail: 'backup-create-driver-error',
        detailWhenDown: 'backup-service-down',
      },
      false,
    ),
    deleting: job('error_deleting', {
      action: 'backup-delete',
      detail: 'backup-delete-driver-error',
      detailWhenDown: 'backup-service-down',
    }),
    restoring: job(
      'available',
      { action: 'backup-restore', detail: 'backup-restore-error', detailWhenDown: 'backup-service-down' },
      false,
    ),
  },
  group: {
    creating: outside('error'),
    updating: outside('available'),
    deleting: outside('error_deleting'),
  },
  group_snapshot: {
    creating: outside('error'),
    updating: outside('available'),
    deleting: outside('error_deleting'),
  },
};

/** A running migration of a volume: the destination back end's job, ended by failing the migration (volume back to its previous status). */
export const MIGRATION_RULE: StuckRule = job('previous', {
  action: 'migrate-volume',
  detail: 'unknown-error',
  detailWhenDown: 'driver-not-initialized',
});

/** The statuses of `resource` the reconciler looks at (the keys of its rule table). */
export const transitionalStatuses = (resource: ReconciledResource): string[] =>
  Object.keys(STUCK_RULES[resource]);

/** The owning worker: heartbeat fresh, stale (or never seen), or no owner yet (a volume the scheduler never placed). */
export type WorkerState = 'alive' | 'down' | 'unplaced';

/** One row in a transitional status, as the reconciler sees it. */
export interface StuckWork {
  readonly resource: ReconciledResource;
  readonly status: string;
  /** Volumes: a migration under way (`starting`, `migrating`) is the work that is waited for. */
  readonly migrationStatus?: string | null;
  /** Milliseconds since the row changed, its job last reported progress, or the reconciler last resumed it. */
  readonly idleMs: number;
  readonly worker: WorkerState;
  /** The row holds what its recovery job needs (an extend's reservation, a migration's job, ...). */
  readonly jobInputs: boolean;
  /** How often the reconciler already resumed the row in this status. */
  readonly resumes: number;
  /** For `holder` statuses: the holding work is still there (a `creating` backup of the volume, ...). */
  readonly holderLive?: boolean;
}

export interface ReconcileBounds {
  /** A transitional row idle for this long has lost its work (progress resets it). */
  readonly stuckAfterMs: number;
  /** Resumes per row and status before it is ended instead. */
  readonly maxResumes: number;
}

export type StuckDecision =
  | { readonly action: 'leave'; readonly reason: string }
  | { readonly action: 'resume'; readonly reason: string }
  | {
      readonly action: 'end';
      readonly to: StuckEnd;
      readonly reason: string;
      readonly message: UserMessageRef | null;
    };

/** The rule for a row: a running migration first, then its status; null when the status is not transitional. */
export function stuckRuleOf(
  work: Pick<StuckWork, 'resource' | 'status' | 'migrationStatus'>,
): StuckRule | null {
  if (work.resource === 'volume' && isMigrating(work.migrationStatus ?? null)) return MIGRATION_RULE;
  return STUCK_RULES[work.resource][work.status] ?? null;
}

const seconds = (ms: number): number => Math.floor(ms / 1000);

/**
 * The reconciler's decision for one row (pure; Conductor-style decide, the caller applies).
 * A row is left alone while it is not transitional, while it changed or progressed within the
 * bound, and while the work holding it is live. Past the bound, work of a live back end is
 * resumed (its job queued again) when the job can be rebuilt and is idempotent, at most
 * `maxResumes` times; otherwise the row ends where Cinder leaves a failed operation, with the
 * user message upstream records for it.
 */
export function decideStuck(work: StuckWork, bounds: ReconcileBounds): StuckDecision {
  const rule = stuckRuleOf(work);
  const what =
    work.resource === 'volume' && rule === MIGRATION_RULE
      ? `migration (${work.migrationStatus ?? ''})`
      : work.status;
  if (rule === null) return { action: 'leave', reason: `${work.status} is not a transitional status` };
  if (work.idleMs < bounds.stuckAfterMs)
    return { action: 'leave', reason: `${what} changed or progressed ${seconds(work.idleMs)} s ago` };
  const end = (reason: string, down = false): StuckDecision => ({
    action: 'end',
    to: rule.endsIn,
    reason,
    message:
      rule.message === null
        ? null
        : {
            action: rule.message.action,
            detail: down ? (rule.message.detailWhenDown ?? rule.message.detail) : rule.message.detail,
          },
  });
  const idle = `${what} for ${seconds(work.idleMs)} s`;
  switch (rule.waitsFor) {
    case 'holder':
      return work.holderLive === true
        ? { action: 'leave', reason: `${what} is held by live work` }
        : end(`${idle} and the work holding it is gone`);
    case 'outside':
      return end(`${idle} and nothing in this service drives it on`);
    case 'client':
      return {
        action: 'leave',
        reason: `${what} is driven by the attaching client, which Cinder never times out`,
      };
    case 'backend-job':
      if (work.worker === 'unplaced') {
        return {
          action: 'end',
          to: rule.endsIn,
          reason: `${idle} and no back end was ever chosen for it`,
          message:
            work.resource === 'volume'
              ? { action: 'schedule-allocate-volume', detail: 'unknown-error' }
              : null,
        };
      }
      if (work.worker === 'down')
        return end(`${idle} and its back end has not reported within the bound`, true);
      if (!rule.resumable) return end(`${idle} without progress; the operation cannot be resumed`);
      if (!work.jobInputs) return end(`${idle} without progress; what its job needs is no longer stored`);
      if (work.resumes >= bounds.maxResumes)
        return end(`${idle} without progress after ${work.resumes} resume(s)`);
      return { action: 'resume', reason: `${idle} without progress; its job is queued again` };
  }
}

/** `previous` resolved: the status an operation returns a volume to (BS-8.1.5). */
export const previousVolumeStatus = (attached: boolean): 'in-use' | 'available' =>
  attached ? 'in-use' : 'available';

/** One quota usage figure as stored or as recounted from the rows. */
export interface QuotaFigure {
  readonly inUse: number;
  readonly reserved: number;
}

export interface QuotaCorrection {
  readonly resource: string;
  readonly column: 'in_use' | 'reserved';
  readonly stored: number;
  readonly counted: number;
}

/**
 * The usage columns that drifted from the recount (Cinder's quota sync): every stored key is
 * compared with its count (0 when no row counts for it any more).
 */
export function quotaCorrections(
  stored: Readonly<Record<string, QuotaFigure>>,
  counted: Readonly<Record<string, QuotaFigure>>,
): QuotaCorrection[] {
  const out: QuotaCorrection[] = [];
  for (const resource of Object.keys(stored).sort()) {
    const s = stored[resource] ?? { inUse: 0, reserved: 0 };
    const c = counted[resource] ?? { inUse: 0, reserved: 0 };
    if (s.inUse !== c.inUse) out.push({ resource, column: 'in_use', stored: s.inUse, counted: c.inUse });
    if (s.reserved !== c.reserved)
      out.push({ resource, column: 'reserved', stored: s.reserved, counted: c.reserved });
  }
  return out;
}
