import type { DataSource, EntityManager } from 'typeorm';
import {
  GROUP_SETTLEMENTS,
  GROUP_SNAPSHOT_SETTLEMENTS,
  settledGroupSnapshotStatus,
  settledGroupStatus,
  type GroupSnapshotStatus,
  type GroupStatus,
} from '@osc/block-storage-domain';
import {
  GroupRepository,
  GroupSnapshotRepository,
  QuotaRepository,
  type ReconcileRepository,
  type StuckGroupRow,
} from '@osc/block-storage-persistence';
import type { Pass, Scan, StuckRows } from './reconcile-pass';

const GROUP_RELEASE = [{ resource: 'groups', delta: -1 }];

/**
 * Stuck groups, then stuck group snapshots: one whose members' work is pending is settled as its
 * members say (deleted, or its settled status); any other is ended in the status the domain names.
 */
export class GroupScan implements Scan {
  private readonly groups = new GroupRepository();
  private readonly groupSnapshots = new GroupSnapshotRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    private readonly db: DataSource,
    private readonly reconcile: ReconcileRepository,
    private readonly rows: StuckRows,
  ) {}

  async run(pass: Pass): Promise<void> {
    for (const resource of ['group', 'group_snapshot'] as const) {
      for (const { id } of await this.reconcile.stuckGroups(
        this.db,
        resource,
        this.rows.query(pass, resource),
      )) {
        await this.rows.claim(
          pass,
          resource,
          id,
          (em) => this.reconcile.stuckGroups(em, resource, { ...this.rows.query(pass, resource), claim: id }),
          (em, g) => this.resolve(pass, em, resource, g),
        );
      }
    }
  }

  private async resolve(
    pass: Pass,
    em: EntityManager,
    resource: 'group' | 'group_snapshot',
    g: StuckGroupRow,
  ): Promise<void> {
    if (g.pending) {
      // The members' work decides (as a read of the group would settle it); members still
      // transitional are reconciled on their own, and the group follows on a later pass.
      const outcome =
        resource === 'group'
          ? settledGroupStatus(g.status as GroupStatus, g.members)
          : settledGroupSnapshotStatus(g.status as GroupSnapshotStatus, g.members);
      if (outcome === null) return;
      let done: boolean;
      if (outcome === 'deleted') {
        done =
          resource === 'group'
            ? await this.groups.softDelete(em, g.id, ['deleting'], pass.now)
            : await this.groupSnapshots.softDelete(em, g.id, pass.now);
        if (done && resource === 'group')
          await this.quotas.apply(em, g.projectId, GROUP_RELEASE, 'in_use', false);
      } else {
        done =
          resource === 'group'
            ? await this.groups.transition(em, g.id, GROUP_SETTLEMENTS[outcome], pass.now, { pending: false })
            : await this.groupSnapshots.transition(em, g.id, GROUP_SNAPSHOT_SETTLEMENTS[outcome], pass.now, {
                pending: false,
              });
      }
      if (done) {
        pass.ended++;
        this.rows.report('ended', resource, g.id, g.status, 'its members settled it', outcome);
      }
      return;
    }
    const d = this.rows.decide(pass, resource, g, {});
    if (d.action !== 'end') return;
    const done =
      resource === 'group'
        ? await this.groups.compareAndSetStatus(
            em,
            g.id,
            [g.status as GroupStatus],
            d.to as GroupStatus,
            pass.now,
          )
        : await this.groupSnapshots.compareAndSetStatus(
            em,
            g.id,
            [g.status as GroupSnapshotStatus],
            d.to as GroupSnapshotStatus,
            pass.now,
          );
    // Cinder has no user-message resource type for groups: the log line is the record.
    if (done)
      await this.rows.ended(
        pass,
        em,
        { resource, id: g.id, projectId: g.projectId, from: g.status, to: d.to, messageType: null },
        d,
      );
  }
}
