import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { type EngineCommandMessage, isEngineCommandType } from '@osc/contracts';
import { InvalidInputError } from '@osc/errors';
import {
  type CommandMessage,
  DEFAULT_MAX_DELIVERIES,
  type DeliveryInfo,
  type MessagingLogger,
  type OutboxWriter,
} from '@osc/messaging';
import { ITEMS_STARTED_PER_DECISION } from '@osc/workflow-domain';
import { SpecCache } from '@osc/workflow-persistence';
import { StandardActionRunner } from '@osc/actions';
import { CommandBatches } from './command-batches';
import { FailedCommands, stderrLogger } from './command-failures';
import { DecisionStore } from './decision-store';
import { EffectItems } from './effect-items';
import { toEngineEvents } from './engine-events';
import { EventDecider } from './event-decider';
import { GroupTransactions } from './group-transactions';
import { defaultGroupTransactions } from './group-transactions-default';
import type { EngineLog } from './history-announcements';

export interface EngineHandlerOptions {
  /** `<public api url>` for async callbacks (`Mistral-Callback-URL`); optional. */
  apiUrl?: string;
  now?: () => Date;
  newId?: () => string;
  /**
   * Complete side-effect-free standard actions (std.noop, std.echo without delay, std.fail) inside
   * the engine's transaction instead of through an executor job (see `inline-actions.ts`); default true.
   */
  inlineActions?: boolean;
  /**
   * Items one decision starts per with-items task (see `DecideOptions` in workflow-domain); default
   * `ITEMS_STARTED_PER_DECISION` (1,000); 0 starts every item in one transaction.
   */
  itemsPerDecision?: number;
  /** Engine transactions run at once; default `defaultGroupTransactions(inlineActions)` (group-transactions-default.ts). */
  groupTransactions?: number;
  /** Deliveries the bus makes of a failing command (its consumer's `maxDeliveries`); default the bus default. */
  maxDeliveries?: number;
  /** Where failures to apply a command are reported; default one JSON line on stderr. */
  logger?: MessagingLogger;
  /** Where the story of executions is told: one info line per execution and task state change. */
  log?: EngineLog;
}

/**
 * The engine's only I/O: per command, in one transaction, lock the execution row and load its
 * snapshot, `decide`, write the changes and the outgoing messages (outbox), commit. A redelivered
 * command finds its effect applied and `decide` returns nothing, so handling is idempotent.
 *
 * The handler wires the parts together: intake and batching per execution (`command-batches.ts`),
 * transactions shared by executions (`group-transactions.ts`), deciding with inline actions and
 * item loads (`event-decider.ts`), writing rows, history and outgoing messages (`decision-store.ts`,
 * `effect-items.ts`, `sub-workflow-links.ts`, `notify-items.ts`), and commands that cannot be
 * applied (`command-failures.ts`).
 */
export class EngineCommandHandler {
  private readonly batches: CommandBatches;

  constructor(dataSource: DataSource, outbox: OutboxWriter, options: EngineHandlerOptions = {}) {
    const now = options.now ?? (() => new Date());
    const newId = options.newId ?? randomUUID;
    const specs = new SpecCache();
    const inlineRunner = options.inlineActions === false ? null : new StandardActionRunner();
    const store = new DecisionStore(now, new EffectItems(options.apiUrl, now, newId));
    const decider = new EventDecider(
      now,
      newId,
      inlineRunner,
      options.itemsPerDecision ?? ITEMS_STARTED_PER_DECISION,
    );
    const failures = new FailedCommands(
      dataSource,
      outbox,
      specs,
      store,
      now,
      newId,
      options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES,
      options.logger ?? stderrLogger,
      options.log,
    );
    const groups = new GroupTransactions(
      dataSource,
      outbox,
      specs,
      decider,
      store,
      options.log,
      options.groupTransactions ?? defaultGroupTransactions(options.inlineActions !== false),
    );
    this.batches = new CommandBatches(groups, failures);
  }

  /**
   * Handles one bus message; unknown types are rejected (dead-lettered) without retry. Messages of
   * one execution that arrive while a transaction of that execution is running are applied together
   * in the next one (one lock, one snapshot load, one write): each message is acknowledged only
   * after the transaction holding its event committed, so delivery stays at least once.
   *
   * A command that cannot be applied never leaves its execution RUNNING with nothing happening: a
   * failure that another delivery may cure (a lost connection) is logged and the command redelivered;
   * one that cannot be cured (see `isDeterministicFailure` in `command-failures.ts`), or any failure
   * of the last delivery (`info.deliveryCount` reaching `maxDeliveries`), is logged at error and ends
   * the execution in ERROR with a `state_info` naming the command and the failure, and the command is
   * acknowledged.
   */
  async handle(msg: CommandMessage, info?: DeliveryInfo): Promise<void> {
    if (!isEngineCommandType(msg.type))
      throw new InvalidInputError(`unknown engine command type ${msg.type}`);
    const events = toEngineEvents(msg as EngineCommandMessage);
    if (events.length === 1)
      return this.batches.enqueue(events[0]!.executionId, events[0]!.event, msg.type, info);
    // several results: each joins its execution's next batch; the message is done when all are
    // (one failing retryably brings the whole message back, and the applied ones are no-ops then)
    await Promise.all(
      events.map((e) => this.batches.enqueue(e.executionId, e.event, 'engine.action-completed', info)),
    );
  }
}
