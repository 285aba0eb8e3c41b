import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  formatMicroversion,
  parseActionBody,
  supports,
  type MicroversionFeature,
} from '@osc/block-storage-domain';
import type { StoredVolume } from '@osc/block-storage-persistence';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import { DATA_SOURCE } from '@osc/platform';
import { AttachActionsService } from '../attachments/attach-actions.service';
import type { ApiRequest } from '../http/api-request';
import { VolumeAttachFlowService } from './volume-attach-flow.service';
import { VolumeLifecycleService } from './volume-lifecycle.service';
import { loadVolume } from './volume-lookup';
import { VolumeMigrationService } from './volume-migration.service';

/** What a volume action answers: Cinder's status code and, for the few that return one, a body. */
export interface VolumeActionResult {
  readonly status: number;
  readonly body?: unknown;
}

/**
 * One row of the action route: the policy rule checked on the volume's project before the
 * handler runs (null: the handler authorizes, because the rule depends on its arguments or the
 * attachment it finds), the microversion the action needs (below it: Cinder's 404 "API version
 * not supported"), the status code, and the handler.
 */
interface VolumeActionRoute {
  readonly policy: string | null;
  readonly requires?: MicroversionFeature;
  readonly status: 200 | 202;
  readonly handle: (api: ApiRequest, v: StoredVolume, args: unknown) => Promise<unknown>;
}

/**
 * `POST /volumes/{id}/action` (BS-8.1): the body names exactly one action; the table below is
 * the whole route, action → policy rule and handler, each handler in the service of its seam
 * (lifecycle, attach flow, attachments, migration). An unknown action is "no such action" (BS-1.4).
 */
@Injectable()
export class VolumeActionsService {
  private readonly routes: Readonly<Record<(typeof VOLUME_ACTIONS)[number], VolumeActionRoute>>;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    lifecycle: VolumeLifecycleService,
    attachFlow: VolumeAttachFlowService,
    attachments: AttachActionsService,
    migration: VolumeMigrationService,
  ) {
    this.routes = {
      'os-extend': {
        policy: 'volume:extend',
        status: 202,
        handle: (api, v, args) => lifecycle.extend(api, v, args),
      },
      'os-reset_status': {
        policy: 'volume_extension:volume_admin_actions:reset_status',
        status: 202,
        handle: (_api, v, args) => lifecycle.resetStatus(v, args),
      },
      'os-force_delete': {
        policy: 'volume_extension:volume_admin_actions:force_delete',
        status: 202,
        handle: (_api, v) => lifecycle.deleteVolume(v, { force: true, cascade: false }),
      },
      'os-set_bootable': {
        policy: 'volume:update',
        status: 200,
        handle: (_api, v, args) => lifecycle.setBootable(v, args),
      },
      'os-update_readonly_flag': {
        policy: 'volume:update',
        status: 202,
        handle: (_api, v, args) => lifecycle.updateReadonlyFlag(v, args),
      },
      'os-reserve': {
        policy: 'volume_extension:volume_actions:reserve',
        status: 202,
        handle: (_api, v) => attachFlow.reserve(v),
      },
      'os-unreserve': {
        policy: 'volume_extension:volume_actions:unreserve',
        status: 202,
        handle: (_api, v) => attachFlow.unreserve(v),
      },
      'os-begin_detaching': {
        policy: 'volume_extension:volume_actions:begin_detaching',
        status: 202,
        handle: (_api, v) => attachFlow.beginDetaching(v),
      },
      'os-roll_detaching': {
        policy: 'volume_extension:volume_actions:roll_detaching',
        status: 202,
        handle: (_api, v) => attachFlow.rollDetaching(v),
      },
      'os-detach': {
        policy: 'volume_extension:volume_actions:detach',
        status: 202,
        handle: (api, v, args) => attachments.detach(api, v, args),
      },
      'os-attach': { policy: null, status: 202, handle: (api, v, args) => attachments.attach(api, v, args) },
      'os-initialize_connection': {
        policy: null,
        status: 200,
        handle: (api, v, args) => attachments.initializeConnection(api, v, args),
      },
      'os-terminate_connection': {
        policy: null,
        status: 202,
        handle: (api, v, args) => attachments.terminateConnection(api, v, args),
      },
      'os-force_detach': {
        policy: null,
        status: 202,
        handle: (api, v, args) => attachments.forceDetach(api, v, args),
      },
      'os-retype': {
        policy: 'volume:retype',
        status: 202,
        handle: (_api, v, args) => migration.retype(v, args),
      },
      'os-migrate_volume': {
        policy: 'volume_extension:volume_admin_actions:migrate_volume',
        status: 202,
        handle: (api, v, args) => migration.migrate(api, v, args),
      },
      'os-unmanage': {
        policy: 'volume_extension:volume_unmanage',
        status: 202,
        handle: (_api, v) => lifecycle.unmanage(v),
      },
      revert: {
        policy: 'volume:revert_to_snapshot',
        requires: 'volume.revert',
        status: 202,
        handle: (_api, v, args) => lifecycle.revert(v, args),
      },
    };
  }

  async run(api: ApiRequest, id: string, body: unknown): Promise<VolumeActionResult> {
    const { action, args } = parseActionBody(body, VOLUME_ACTIONS);
    const v = await loadVolume(this.db, api, id);
    const route = (this.routes as Readonly<Record<string, VolumeActionRoute | undefined>>)[action];
    if (route === undefined) throw new InvalidInputError(`There is no such action: ${action}`);
    if (route.requires !== undefined && !supports(api.mv, route.requires)) {
      throw new NotFoundError(
        'version',
        formatMicroversion(api.mv),
        `API version ${formatMicroversion(api.mv)} is not supported on this method.`,
      );
    }
    if (route.policy !== null) api.authorize(route.policy, v.projectId);
    const answer = await route.handle(api, v, args);
    return answer === undefined ? { status: route.status } : { status: route.status, body: answer };
  }
}

/** Volume actions this service implements (BS-1.4: anything else is "no such action"). */
export const VOLUME_ACTIONS = [
  'os-extend',
  'os-reset_status',
  'os-force_delete',
  'os-set_bootable',
  'os-update_readonly_flag',
  'os-reserve',
  'os-unreserve',
  'os-begin_detaching',
  'os-roll_detaching',
  'os-detach',
  'os-attach',
  'os-initialize_connection',
  'os-terminate_connection',
  'os-force_detach',
  'os-retype',
  'os-migrate_volume',
  'os-unmanage',
  'revert',
] as const;
