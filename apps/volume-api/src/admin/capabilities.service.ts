import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { NotFoundError } from '@osc/errors';
import { PoolRepository, ServiceRepository } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

/** Standard capability properties every back end of this service answers (thin provisioning is the only one it has). */
const STANDARD_PROPERTIES = {
  thin_provisioning: {
    title: 'Thin Provisioning',
    description: 'Volumes are allocated on write.',
    type: 'boolean',
  },
  compression: { title: 'Compression', description: 'Data is stored compressed.', type: 'boolean' },
  qos: { title: 'QoS', description: 'Quality of service limits are applied.', type: 'boolean' },
  replication_enabled: { title: 'Replication', description: 'Volumes are replicated.', type: 'boolean' },
};

/**
 * `GET /capabilities/{host}` (admin, BS-7.12.5): the capabilities of a cinder-volume back end
 * (`host@backend`; a `#pool` suffix is ignored) from the stats its worker last reported.
 */
@Injectable()
export class CapabilitiesService {
  private readonly services = new ServiceRepository();
  private readonly pools = new PoolRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  async show(api: ApiRequest, host: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:capabilities');
    const backend = host.split('#', 1)[0] ?? host;
    const services = await this.services.list(this.db, { binary: 'cinder-volume' });
    const svc = services.find((s) => s.host === backend);
    const notFound = new NotFoundError('Service', host, `Can't find service: ${host}`);
    if (!svc) throw notFound;
    const since = new Date(this.clock.now().getTime() - this.config.serviceDownSeconds * 1000);
    const pool = (await this.pools.listFresh(this.db, since)).find((p) => p.backend === backend);
    if (!pool) throw notFound;
    const c = pool.capabilities;
    return {
      namespace: `OS::Storage::Capabilities::${backend}`,
      vendor_name: c['vendor_name'] ?? null,
      volume_backend_name: c['volume_backend_name'] ?? null,
      pool_name: c['pool_name'] ?? null,
      driver_version: c['driver_version'] ?? null,
      storage_protocol: c['storage_protocol'] ?? null,
      display_name: c['display_name'] ?? null,
      description: c['description'] ?? null,
      visibility: c['visibility'] ?? null,
      replication_targets: Array.isArray(c['replication_targets']) ? c['replication_targets'] : [],
      properties: STANDARD_PROPERTIES,
    };
  }
}
