import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '@osc/platform';
import { type ServiceKind, ServiceHeartbeat, listServiceInstances } from '@osc/workflow-persistence';

export const SERVICES_SETTINGS = Symbol('SERVICES_SETTINGS');

export interface ServicesSettings {
  /** How often this API process records that it is alive. */
  readonly heartbeatSeconds: number;
  /** Instances silent longer than this are not listed (a coordination backend forgets them too). */
  readonly aliveWithinSeconds: number;
}

/**
 * Mistral's group of each instance kind (`<name>_group` of its coordination backend). The
 * cron-scheduler has no Mistral counterpart (Mistral fires cron triggers inside its engine): it is
 * listed as `cron-scheduler_group`.
 */
const GROUP: Readonly<Record<ServiceKind, string>> = {
  api: 'api_group',
  engine: 'engine_group',
  executor: 'executor_group',
  notifier: 'notifier_group',
  cron_scheduler: 'cron-scheduler_group',
};
const ORDER: readonly ServiceKind[] = ['api', 'engine', 'executor', 'notifier', 'cron_scheduler'];

/**
 * `GET /v2/services` from `workflow_service_instances`, which every workflow process heartbeats
 * into; this API process registers itself as an `api` instance while it runs. A member is named
 * `<host>_<pid>` as Mistral names coordination members (several kinds in one process share a name).
 */
@Injectable()
export class ServicesService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('workflow-api');
  private readonly heartbeat: ServiceHeartbeat;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(SERVICES_SETTINGS) private readonly settings: ServicesSettings,
  ) {
    this.heartbeat = new ServiceHeartbeat(
      db,
      ['api'],
      settings.heartbeatSeconds * 1000,
      (level, msg, fields) =>
        level === 'warn' ? this.logger.warn({ ...fields, msg }) : this.logger.error({ ...fields, msg }),
    );
  }

  async onModuleInit(): Promise<void> {
    await this.heartbeat.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.heartbeat.stop();
  }

  async list(): Promise<{ name: string; type: string }[]> {
    const instances = await listServiceInstances(this.db, this.settings.aliveWithinSeconds);
    const seen = new Set<string>();
    const services: { name: string; type: string; rank: number }[] = [];
    for (const i of instances) {
      const name = `${i.host}_${i.pid}`;
      const type = GROUP[i.kind];
      if (!type || seen.has(`${type} ${name}`)) continue;
      seen.add(`${type} ${name}`);
      services.push({ name, type, rank: ORDER.indexOf(i.kind) });
    }
    return services.sort((a, b) => a.rank - b.rank).map(({ name, type }) => ({ name, type }));
  }
}
