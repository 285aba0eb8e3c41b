import type { DataSource } from 'typeorm';
import { StandardActionRunner, runAdHocAction } from '@osc/actions';
import {
  ACTION_RUN_BATCH_JOB,
  type ActionRunBatchJob,
  type ActionCompletedPayload,
  type ActionContext,
  type ActionOutcome,
  type ActionRunJob,
} from '@osc/contracts';
import { AppError } from '@osc/errors';
import type { CommandBus, Job } from '@osc/messaging';
import { inSpan, productMetrics } from '@osc/telemetry';
import { type ActionSpec, executorLostMessage } from '@osc/workflow-domain';
import {
  completeStandaloneAction,
  findAdHocActionSpec,
  findRunnableDynamicAction,
} from '@osc/workflow-persistence';
import { ActionClaims } from './action-claims';
import { retryAfter, retryConnectionRefusals } from './connection-refusals';
import { ResultReports } from './result-reports';
import { RunSlots } from './run-slots';

/** Raised while resolving an action: a fatal task failure (DSL-13.6), reported with its message. */
class FatalActionError extends Error {}

/**
 * Delays before a report whose publish failed (no confirm within the bus's timeout, or a nack) is
 * published again: the engine ignores a result it has applied already, so sending it twice is safe.
 */
export const REPORT_RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000];

/** The report of `outcome` for the run `data`. */
const payloadOf = (
  data: ActionRunJob,
  outcome: Pick<ActionCompletedPayload, 'state' | 'result' | 'error' | 'fatal'>,
): ActionCompletedPayload => ({
  executionId: data.executionId,
  taskExecutionId: data.taskExecutionId,
  actionExecutionId: data.actionExecutionId,
  ...outcome,
});

/**
 * Executor worker: runs one action-run job and reports the outcome to the engine as an
 * `engine.action-completed` command (id `action-completed:<action execution id>`, so a job that runs
 * twice after a crash reports once as far as the engine is concerned), or, with the results that
 * pile up while a report is being published, in one `engine.actions-completed` (`ResultReports`). Ad-hoc actions are resolved
 * here (DSL-7.2): declared input checked and defaulted, `base-input` evaluated over the action input
 * layered on the task context, repeated down to a standard action, whose result the ad-hoc `output`
 * may transform. An action name that is neither standard nor ad-hoc may be a dynamic action
 * (`/v2/dynamic_actions`, same namespace rules): its code source's class runs in the JavaScript
 * sandbox (docs/workflow-dynamic-actions.md).
 */
export class ActionExecutor {
  private readonly claims: ActionClaims;
  /** A run holds a slot from before its claim until its report is confirmed. */
  private readonly slots: RunSlots;
  private readonly results: ResultReports;

  /**
   * `maxRunning`: the executor's job concurrency, which also bounds the runs of batch jobs.
   * `executorId`: this executor's instance in `workflow_service_instances`, recorded with every claim
   * so that the reconciler can tell a run whose executor died (issue #15).
   */
  constructor(
    private readonly dataSource: DataSource,
    bus: CommandBus,
    private readonly runner: StandardActionRunner,
    maxRunning = 50,
    executorId: string | null = null,
    private readonly reportRetryDelaysMs: readonly number[] = REPORT_RETRY_DELAYS_MS,
  ) {
    this.claims = new ActionClaims(dataSource, undefined, executorId);
    this.slots = new RunSlots(maxRunning);
    this.results = new ResultReports(bus);
  }

  async run(job: Job): Promise<void> {
    if (job.name === ACTION_RUN_BATCH_JOB) return this.runBatch(job.data as ActionRunBatchJob);
    return this.runAndReport(job.data as ActionRunJob);
  }

  /**
   * Runs one action and reports its outcome in a slot, held from before the claim until the broker
   * confirmed the report: the slots bound what an executor that dies can cut off (its runs claimed
   * and not yet reported) to `maxRunning`. (Stop 34 let a run leave its slot when the action had
   * finished, with a second bound of twice the slots until the confirm: a confirm then took 24–35 ms
   * and held slots capped an executor at ~2,000 runs a second. That delay was Nagle's algorithm on the
   * broker connection; without it a confirm takes ~1 ms and the slot costs nothing to keep.) With
   * `reportThrows` (a batch job's runs), a run that throws is reported as ERROR instead of failing
   * the job.
   */
  private runAndReport(data: ActionRunJob, reportThrows = false): Promise<void> {
    return this.slots.use(async () => {
      let outcome: ActionCompletedPayload | undefined;
      try {
        outcome = await this.runOne(data);
      } catch (e) {
        if (!reportThrows) throw e;
        outcome = payloadOf(data, { state: 'ERROR', error: e instanceof Error ? e.message : String(e) });
      }
      if (outcome) await this.publishPersistently(data, outcome);
    });
  }

  /**
   * Publishes a report, again after each of {@link REPORT_RETRY_DELAYS_MS} while publishing fails;
   * then throws the last failure (the job fails and is retried). A run's known outcome is never
   * replaced by the broker's error: an action that succeeded is not reported as failed.
   */
  private publishPersistently(data: ActionRunJob, payload: ActionCompletedPayload): Promise<void> {
    return retryAfter(() => this.publish(data, payload), this.reportRetryDelaysMs);
  }

  /**
   * The item runs of a batch job, each claimed (together: one statement) and reported on its own. A
   * run that throws is reported as an ERROR at once: retrying the whole job would find its siblings
   * claimed and fail them as interrupted. A report that cannot be published fails the job, once
   * every run of it has ended.
   */
  private async runBatch(batch: ActionRunBatchJob): Promise<void> {
    const ended = await Promise.allSettled(batch.runs.map((run) => this.runAndReport(run, true)));
    const failed = ended.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * One span per action run (inside the job's span), named after the action; resolves to the outcome
   * to report, if any.
   */
  private runOne(data: ActionRunJob): Promise<ActionCompletedPayload | undefined> {
    return inSpan(
      `action ${data.actionName}`,
      {
        attributes: {
          'osc.action.name': data.actionName,
          'osc.execution.id': data.executionId,
          'osc.action_execution.id': data.actionExecutionId,
        },
      },
      () => this.runClaimed(data),
    );
  }

  private async runClaimed(data: ActionRunJob): Promise<ActionCompletedPayload | undefined> {
    // Claim the run: at most one executor starts an action. A claim found already taken means a
    // previous run may have started and died (DSL-6.10): rerun only when the task is safe-rerun.
    // A claim the database refused a connection for never ran: try it again for a few seconds rather
    // than fail the action for good ("too many clients" under load, a database restarting).
    const claim = await retryConnectionRefusals(() =>
      this.claims.claim(data.actionExecutionId, data.safeRerun && !data.standalone ? data : undefined),
    );
    if (!claim) return undefined; // already completed or superseded
    if (claim.prev !== null && !data.safeRerun) {
      const lost = executorLostMessage(claim.prevExecutorId ?? null, claim.prevHeartbeat ?? null);
      return payloadOf(data, {
        state: 'ERROR',
        error: `${lost}: the action was interrupted and the task is not safe-rerun`,
      });
    }
    const ctx: ActionContext = { ...data.context, data: data.taskData ?? {} };
    let payload: ActionCompletedPayload;
    const started = process.hrtime.bigint();
    // Seconds this run took, per action name and outcome (docs/metrics.md); async actions are not
    // timed here (their result comes later, through the API).
    const observe = (outcome: string) =>
      productMetrics.actionDuration
        .labels(data.actionName, outcome)
        .observe(Number(process.hrtime.bigint() - started) / 1e9);
    try {
      const outcome = await this.execute(data, ctx);
      if (outcome.kind === 'async') {
        await this.claims.release(data.actionExecutionId);
        return undefined;
      }
      payload = payloadOf(
        data,
        outcome.kind === 'success'
          ? { state: 'SUCCESS', result: outcome.result }
          : { state: 'ERROR', error: outcome.error },
      );
    } catch (e) {
      if (
        e instanceof FatalActionError ||
        (e instanceof AppError && (e.kind === 'not-found' || e.kind === 'invalid'))
      ) {
        payload = payloadOf(data, { state: 'ERROR', error: e.message, fatal: { message: e.message } });
      } else {
        observe('ERROR');
        throw e;
      }
    }
    observe(payload.state);
    return payload;
  }

  /**
   * Reports an outcome: to the engine for a workflow's action; a standalone run (`POST
   * /v2/action_executions`) has no engine to tell, so its row is completed here.
   */
  private async publish(data: ActionRunJob, payload: ActionCompletedPayload): Promise<void> {
    if (data.standalone) {
      await completeStandaloneAction(
        this.dataSource,
        data.actionExecutionId,
        { state: payload.state, result: payload.result, error: payload.error },
        new Date(),
      );
      return;
    }
    await this.results.report(payload);
  }

  private async execute(job: ActionRunJob, ctx: ActionContext): Promise<ActionOutcome> {
    if (this.runner.has(job.actionName)) return this.runner.run(job.actionName, job.input, ctx);
    const resolve = async (name: string) => (await this.findAdHoc(name, job)) ?? undefined;
    const action = await resolve(job.actionName);
    if (action)
      return runAdHocAction(action, job.input, ctx, this.runner, { resolve, namespace: job.namespace });
    const dynamic = await findRunnableDynamicAction(this.dataSource, {
      name: job.actionName,
      namespace: job.namespace,
      projectId: job.context.projectId,
    });
    if (dynamic) {
      const { action: def, codeSource } = dynamic;
      return this.runner.runDynamic({ name: def.name, className: def.className, codeSource }, job.input, ctx);
    }
    throw new FatalActionError(
      `Failed to find action [action_name=${job.actionName}, namespace=${job.namespace}]`,
    );
  }

  private async findAdHoc(name: string, job: ActionRunJob): Promise<ActionSpec | null> {
    const names =
      job.workbookName && !name.startsWith(`${job.workbookName}.`)
        ? [`${job.workbookName}.${name}`, name]
        : [name];
    for (const n of names) {
      const found = await findAdHocActionSpec(this.dataSource, {
        name: n,
        namespace: job.namespace,
        projectId: job.context.projectId,
        visibility: { kind: 'project', projectId: job.context.projectId },
      });
      if (found?.spec) return found.spec as ActionSpec;
    }
    return null;
  }
}
