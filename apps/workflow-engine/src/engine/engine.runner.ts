import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { StandardActionRunner } from '@osc/actions';
import {
  ACTION_JOB_QUEUE,
  ENGINE_COMMAND_QUEUE,
  ENGINE_TIMER_QUEUE,
  NOTIFY_JOB_QUEUE,
  type NotifyJob,
  type TimerFiredPayload,
  engineCommand,
} from '@osc/contracts';
import {
  type CommandBus,
  type JobQueue,
  type OutboxWriter,
  type Subscription,
  type Worker,
  deadLetterQueueOf,
} from '@osc/messaging';
import {
  AmqpPublisher,
  NOTIFY_QUEUES,
  type NotificationPublisher,
  NotificationDispatcher,
  WebhookPublisher,
} from '@osc/notify';
import { COMMAND_BUS, DATA_SOURCE, JOB_QUEUE, OUTBOX_WRITER } from '@osc/platform';
import type { WorkflowEngineConfig } from '../config';
import { ActionExecutor } from '../executor/action-executor';
import { DeadLetters } from '../reconciler/dead-letters';
import { ServiceHeartbeat } from '@osc/workflow-persistence';
import { jsonLineLog } from '../reconciler/reconciler-log';
import { WorkflowReconciler } from '../reconciler/workflow-reconciler';
import { EngineCommandHandler } from './engine-command.handler';

export const ENGINE_CONFIG = Symbol('ENGINE_CONFIG');

/**
 * Starts this process's share of the work when the app boots and stops it on shutdown: the engine
 * command consumer and the timer worker (role engine), the action executor workers (role executor).
 */
@Injectable()
export class EngineRunner implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('workflow-engine');
  private subscription?: Subscription;
  private deadLetterSubscription?: Subscription;
  private readonly workers: Worker[] = [];
  private publishers: NotificationPublisher[] = [];
  readonly handler: EngineCommandHandler;
  readonly heartbeat: ServiceHeartbeat;
  readonly reconciler: WorkflowReconciler;
  private readonly deadLetters: DeadLetters;

  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(COMMAND_BUS) private readonly bus: CommandBus,
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(OUTBOX_WRITER) outbox: OutboxWriter,
    @Inject(ENGINE_CONFIG) private readonly config: WorkflowEngineConfig,
  ) {
    this.handler = new EngineCommandHandler(dataSource, outbox, {
      apiUrl: config.apiUrl,
      inlineActions: config.inlineActions,
      ...(config.itemsPerDecision !== undefined ? { itemsPerDecision: config.itemsPerDecision } : {}),
      ...(config.groupTransactions !== undefined ? { groupTransactions: config.groupTransactions } : {}),
      logger: {
        warn: (message, context) => this.logger.warn({ ...context, msg: message }),
        error: (message, context) => this.logger.error({ ...context, msg: message }),
      },
      log: (fields, msg) => this.logger.log({ ...fields, msg }),
    });
    const r = config.reconcile ?? DEFAULT_RECONCILE;
    const engine = config.role === 'all' || config.role === 'engine';
    const executor = config.role === 'all' || config.role === 'executor';
    this.heartbeat = new ServiceHeartbeat(
      dataSource,
      [...(engine ? (['engine', 'notifier'] as const) : []), ...(executor ? (['executor'] as const) : [])],
      r.heartbeatSeconds * 1000,
      jsonLineLog,
    );
    this.reconciler = new WorkflowReconciler(dataSource, outbox, {
      stuckAfterSeconds: r.stuckAfterSeconds,
      executorDeadAfterSeconds: r.executorDeadAfterSeconds,
    });
    this.deadLetters = new DeadLetters(dataSource, outbox);
  }

  async onModuleInit(): Promise<void> {
    const { role } = this.config;
    // registered before any claim, so every claimed action names a live executor instance
    await this.heartbeat.start();
    if (role === 'all' || role === 'engine') {
      this.subscription = await this.bus.consume(
        ENGINE_COMMAND_QUEUE,
        (msg, info) => this.handler.handle(msg, info),
        {
          prefetch: this.config.prefetch,
        },
      );
      this.deadLetterSubscription = await this.bus.consume(
        deadLetterQueueOf(ENGINE_COMMAND_QUEUE),
        (msg) => this.deadLetters.onEngineCommand(msg),
        {
          prefetch: 1,
        },
      );
      this.workers.push(
        await this.jobs.process(
          ENGINE_TIMER_QUEUE,
          async (job) => {
            const data = job.data as TimerFiredPayload;
            await this.bus.publish(
              ENGINE_COMMAND_QUEUE,
              engineCommand(`timer:${data.timerId}`, 'engine.timer-fired', data),
            );
          },
          {
            concurrency: 10,
            onFailed: (job, error) =>
              void this.deadLetters
                .onTimerJobFailed(job, error)
                .catch((e: unknown) => this.logger.error(`timer job ${job.id}: ${String(e)}`)),
          },
        ),
      );
      const interval = (this.config.reconcile ?? DEFAULT_RECONCILE).intervalSeconds;
      if (interval > 0) this.reconciler.start(interval * 1000);
      // Notifications (DSL-16.2): each notify queue runs one delivery at a time across every engine
      // process, which keeps an execution tree's events in the order the outbox enqueued them; trees
      // are spread over several queues so that one slow webhook does not hold up all the others.
      const publishers: NotificationPublisher[] = [new WebhookPublisher()];
      if (this.config.notifyAmqpUrl) {
        publishers.push(
          new AmqpPublisher({ url: this.config.notifyAmqpUrl, defaultExchange: this.config.notifyExchange }),
        );
      }
      this.publishers = publishers;
      const dispatcher = new NotificationDispatcher(publishers);
      // NOTIFY_JOB_QUEUE itself still drains jobs enqueued before notifications were partitioned.
      for (const queue of [NOTIFY_JOB_QUEUE, ...NOTIFY_QUEUES]) {
        this.workers.push(
          await this.jobs.process(
            queue,
            async (job) => {
              await dispatcher.deliver(job.data as NotifyJob);
            },
            { globalConcurrency: 1 },
          ),
        );
      }
    }
    if (role === 'all' || role === 'executor') {
      const executor = new ActionExecutor(
        this.dataSource,
        this.bus,
        new StandardActionRunner(),
        this.config.executorConcurrency,
        this.heartbeat.ids.executor ?? null,
      );
      this.workers.push(
        await this.jobs.process(ACTION_JOB_QUEUE, (job) => executor.run(job), {
          concurrency: this.config.executorConcurrency,
          onFailed: (job, error) =>
            void this.deadLetters
              .onActionJobFailed(job, error)
              .catch((e: unknown) =>
                this.logger.error(
                  `action job ${job.id} failed: ${String(error)}; reporting it failed: ${String(e)}`,
                ),
              ),
        }),
      );
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.reconciler.stop();
    await this.subscription?.cancel();
    await this.deadLetterSubscription?.cancel();
    for (const w of this.workers.splice(0)) await w.close();
    for (const p of this.publishers.splice(0)) await p.close?.();
    // after the workers: a claimed run finished, so no RUNNING action names these instances
    await this.heartbeat.stop();
  }
}

const DEFAULT_RECONCILE = {
  intervalSeconds: 30,
  stuckAfterSeconds: 300,
  heartbeatSeconds: 10,
  executorDeadAfterSeconds: 120,
} as const;
