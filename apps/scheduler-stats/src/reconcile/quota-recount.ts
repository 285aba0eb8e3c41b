import type { Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { quotaCorrections } from '@osc/block-storage-domain';
import type { ReconcileRepository } from '@osc/block-storage-persistence';

/** The last step of a pass: quota usage recounted from the rows and corrected where it drifted. */
export class QuotaRecount {
  constructor(
    private readonly db: DataSource,
    private readonly reconcile: ReconcileRepository,
    private readonly log: Logger,
  ) {}

  /** Recounts every project's usage from the rows and corrects drifted columns (a warn line each). */
  async run(): Promise<number> {
    let n = 0;
    for (const projectId of await this.reconcile.quotaProjects(this.db)) {
      n += await this.db.transaction((em) => this.recountProject(em, projectId));
    }
    return n;
  }

  /** One project's recount under its usage row locks; returns the number of corrected columns. */
  private async recountProject(em: EntityManager, projectId: string): Promise<number> {
    const counted = await this.reconcile.recount(em, projectId);
    const stored = await this.reconcile.lockUsages(em, projectId, Object.keys(counted));
    // Counted again under the usage locks: a change committed between the two reads is in it.
    const corrections = quotaCorrections(stored, await this.reconcile.recount(em, projectId));
    for (const c of corrections) {
      await this.reconcile.setUsage(em, projectId, c.resource, c.column, c.counted);
      this.log.warn(
        JSON.stringify({
          event: 'block-storage.quota-corrected',
          project: projectId,
          resource: c.resource,
          column: c.column,
          old: c.stored,
          new: c.counted,
        }),
      );
    }
    return corrections.length;
  }
}
