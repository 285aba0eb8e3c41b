import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { formatTimestamp, queryValue, supports } from '@osc/block-storage-domain';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import { ServiceRepository, rowsOf, type StoredService } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

/** `host@backend#pool` → `host@backend`. */
const backendPart = (host: string): string => host.split('#', 1)[0] ?? host;

const serviceNotFound = (host: string | null | undefined): NotFoundError =>
  new NotFoundError(
    'Service',
    String(host),
    host ? `Service None could not be found on host ${host}.` : 'Service None could not be found.',
  );

/**
 * Services (os-services), hosts (os-hosts) and back-end capabilities (BS-7.12): the rows the
 * product's processes heartbeat (scheduler-stats as cinder-scheduler, each volume back end as
 * cinder-volume on `host@backend`), judged up or down by the age of the last heartbeat.
 */
@Injectable()
export class ServicesService {
  private readonly services = new ServiceRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  private isUp(s: StoredService): boolean {
    const last = s.updatedAt ?? s.createdAt;
    return Math.abs(this.clock.now().getTime() - last.getTime()) <= this.config.serviceDownSeconds * 1000;
  }

  /** `GET /os-services[?host=&binary=]` (admin). */
  async list(api: ApiRequest): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:services:index');
    const host = queryValue(api.query['host']);
    const binary = queryValue(api.query['binary']);
    const rows = await this.services.list(this.db, { host, binary });
    return {
      services: rows.map((s) => {
        // An admin change newer than the last heartbeat is what the service shows (Cinder's modified_at).
        const updated =
          s.modifiedAt !== null && (s.updatedAt === null || s.modifiedAt > s.updatedAt)
            ? s.modifiedAt
            : s.updatedAt;
        const out: Record<string, unknown> = {
          binary: s.binary,
          host: s.host,
          zone: s.availabilityZone,
          status: s.disabled ? 'disabled' : 'enabled',
          state: this.isUp(s) ? 'up' : 'down',
          updated_at: formatTimestamp(updated),
        };
        if (s.binary === 'cinder-volume' && supports(api.mv, 'services.backend-state'))
          out['backend_state'] = this.isUp(s) ? 'up' : 'down';
        if (supports(api.mv, 'clusters.api')) out['cluster'] = null;
        out['disabled_reason'] = s.disabledReason;
        if (s.binary === 'cinder-volume') {
          out['replication_status'] = 'disabled';
          out['active_backend_id'] = null;
          out['frozen'] = s.frozen;
        }
        return out;
      }),
    };
  }

  /** `PUT /os-services/{action}` (admin): enable, disable, disable-log-reason, freeze, thaw. */
  async update(api: ApiRequest, action: string, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:services:update');
    const b = serviceBody(body);
    switch (action) {
      case 'enable':
      case 'disable':
      case 'disable-log-reason': {
        const allowed =
          action === 'disable-log-reason'
            ? ['binary', 'host', 'cluster', 'service', 'disabled_reason']
            : ['binary', 'host', 'cluster', 'service'];
        rejectOthers(b, allowed);
        const host = optionalString(b, 'host');
        const service = optionalString(b, 'service') ?? '';
        const binary = optionalString(b, 'binary') ?? '';
        if (binary === '' && service === '')
          throw new InvalidInputError(
            'Invalid input for field/attribute . Value: {}. {} is not valid under any of the given schemas',
          );
        let reason: string | null = null;
        if (action === 'disable-log-reason') {
          const r = b['disabled_reason'];
          if (typeof r !== 'string' || r.trim().length === 0 || r.length > 255) {
            throw new InvalidInputError(
              `Invalid input for field/attribute disabled_reason. Value: ${JSON.stringify(r ?? null)}. Disabled reason contains invalid characters or is too long`,
            );
          }
          reason = r;
        }
        const binaryKey = binary || service;
        const disabled = action !== 'enable';
        if (
          !host ||
          !(await this.services.setAdminState(
            this.db,
            host,
            binaryKey,
            { disabled, disabledReason: disabled ? reason : null },
            this.clock.now(),
          ))
        ) {
          throw serviceNotFound(host);
        }
        const out: Record<string, unknown> = {
          host,
          service,
          binary,
          status: disabled ? 'disabled' : 'enabled',
          disabled,
        };
        if (action === 'disable-log-reason') out['disabled_reason'] = reason;
        return out;
      }
      case 'freeze':
      case 'thaw': {
        rejectOthers(b, ['cluster', 'host']);
        const host = optionalString(b, 'host');
        const rows =
          host === null
            ? []
            : (await this.services.list(this.db, { binary: 'cinder-volume' })).filter(
                (s) => s.host === host || backendPart(s.host) === host,
              );
        const target = rows[0];
        if (!target)
          throw new InvalidInputError(`Invalid input received: No service found with host=${host ?? 'None'}`);
        const freeze = action === 'freeze';
        if (target.frozen === freeze)
          throw new InvalidInputError(
            `Invalid input received: Service is ${freeze ? 'already frozen' : 'not frozen'}.`,
          );
        await this.services.setAdminState(
          this.db,
          target.host,
          target.binary,
          { frozen: freeze },
          this.clock.now(),
        );
        return {};
      }
      default:
        throw new NotFoundError('action', action, 'Unknown action');
    }
  }

  /** `GET /os-hosts[?zone=]` (admin, BS-7.12.1): enabled services only. */
  async hosts(api: ApiRequest): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:hosts');
    const zone = queryValue(api.query['zone']);
    const rows = (await this.services.list(this.db)).filter(
      (s) => !s.disabled && (!zone || s.availabilityZone === zone),
    );
    return {
      hosts: rows.map((s) => ({
        host_name: s.host,
        service: s.binary,
        zone: s.availabilityZone,
        'service-status': this.isUp(s) ? 'available' : 'unavailable',
        'service-state': s.disabled ? 'disabled' : 'enabled',
        'last-update': formatTimestamp(s.updatedAt),
      })),
    };
  }

  /** `GET /os-hosts/{host}` (admin, BS-7.12.2): volume and snapshot totals of a cinder-volume host, then per project. */
  async host(api: ApiRequest, host: string): Promise<Record<string, unknown>> {
    api.authorize('volume_extension:hosts');
    const svc = await this.services.find(this.db, host, 'cinder-volume');
    // Cinder looks the host up among enabled volume services only.
    if (!svc || svc.disabled) throw serviceNotFound(host);
    const like = `${host.replace(/[\\%_]/g, (c) => `\\${c}`)}#%`;
    type Usage = { project_id: string; n: string; gb: string };
    const volumes = rowsOf<Usage>(
      await this.db.query(
        `SELECT project_id, COUNT(*)::text AS n, COALESCE(SUM(size), 0)::text AS gb FROM "volumes" WHERE deleted = false AND (host = $1 OR host LIKE $2) GROUP BY project_id ORDER BY project_id`,
        [host, like],
      ),
    );
    const snaps = rowsOf<Usage>(
      await this.db.query(
        `SELECT s.project_id, COUNT(*)::text AS n, COALESCE(SUM(s.size), 0)::text AS gb FROM "snapshots" s WHERE s.deleted = false AND s.project_id = ANY($1::varchar[]) GROUP BY s.project_id`,
        [volumes.map((v) => v.project_id)],
      ),
    );
    const snapOf = new Map(snaps.map((s) => [s.project_id, s]));
    const total = volumes.reduce((a, v) => ({ n: a.n + Number(v.n), gb: a.gb + Number(v.gb) }), {
      n: 0,
      gb: 0,
    });
    const snapTotal = volumes.reduce(
      (a, v) => ({
        n: a.n + Number(snapOf.get(v.project_id)?.n ?? 0),
        gb: a.gb + Number(snapOf.get(v.project_id)?.gb ?? 0),
      }),
      { n: 0, gb: 0 },
    );
    const resource = (project: string, n: number, gb: number, sn: number, sgb: number) => ({
      resource: {
        host,
        project,
        volume_count: String(n),
        total_volume_gb: String(gb),
        snapshot_count: String(sn),
        total_snapshot_gb: String(sgb),
      },
    });
    return {
      host: [
        resource('(total)', total.n, total.gb, snapTotal.n, snapTotal.gb),
        ...volumes.map((v) =>
          resource(
            v.project_id,
            Number(v.n),
            Number(v.gb),
            Number(snapOf.get(v.project_id)?.n ?? 0),
            Number(snapOf.get(v.project_id)?.gb ?? 0),
          ),
        ),
      ],
    };
  }
}

function serviceBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError(`${JSON.stringify(body)} is not of type 'object'`);
  return body as Record<string, unknown>;
}

function rejectOthers(b: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(b).filter((k) => !allowed.includes(k));
  if (extra.length > 0)
    throw new InvalidInputError(
      `Additional properties are not allowed (${extra.map((k) => `'${k.slice(0, 60)}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
}

function optionalString(b: Record<string, unknown>, key: string): string | null {
  const v = b[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > 255)
    throw new InvalidInputError(
      `Invalid input for field/attribute ${key}. Value: ${JSON.stringify(v)}. ${JSON.stringify(v)} is not of type 'string'`,
    );
  return v;
}
