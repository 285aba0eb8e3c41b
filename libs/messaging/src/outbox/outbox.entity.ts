import { Check, Column, Entity, Generated, PrimaryGeneratedColumn, Unique } from 'typeorm';

export const OUTBOX_DESTINATIONS = ['bus', 'jobs'] as const;
export type OutboxDestination = (typeof OUTBOX_DESTINATIONS)[number];

/**
 * A message or job waiting to be handed to the bus or the job queue, written in the same
 * transaction as the state change that caused it. `seq` orders delivery; rows that share a
 * `partitionKey` (an execution, a volume) are delivered in `seq` order even with several relays.
 * The relay deletes a row once the broker has confirmed it.
 */
@Entity({ name: 'outbox' })
@Check('CHK_outbox_destination', `"destination" IN ('bus', 'jobs')`)
@Unique('UQ_outbox_seq', ['seq'])
export class OutboxEntity {
  /** Defaults to `gen_random_uuid()` in the migration (the same function on PostgreSQL and PGlite). */
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_outbox' })
  id!: string;

  @Column({ type: 'varchar', length: 8 })
  destination!: OutboxDestination;

  @Column({ type: 'varchar', length: 200 })
  queue!: string;

  /** The `CommandMessage` (bus) or the `NewJob` (jobs). */
  @Column({ type: 'jsonb' })
  payload!: unknown;

  @Column({ name: 'partition_key', type: 'varchar', length: 255, nullable: true })
  partitionKey!: string | null;

  /** Set on rows their writer hands off itself: relays skip them until then (see the migration). */
  @Column({ name: 'claimable_at', type: 'timestamptz', nullable: true })
  claimableAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  /** bigserial; a string because it may exceed 2^53. */
  @Column({ type: 'bigint', insert: false, update: false })
  @Generated('increment')
  seq!: string;
}

export const outboxEntities = [OutboxEntity];
