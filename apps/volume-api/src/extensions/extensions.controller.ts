import { Controller, Get, Param } from '@nestjs/common';
import { NotFoundError } from '@osc/errors';
import { routes } from '../http/api-request';

/** Aliases and names of the API extensions the service advertises (BS-7.1.1). */
const EXTENSIONS: readonly (readonly [alias: string, name: string, description: string])[] = [
  ['os-hosts', 'Hosts', 'Admin-only host administration.'],
  [
    'os-vol-tenant-attr',
    'VolumeTenantAttribute',
    'Expose the internal project_id as an attribute of a volume.',
  ],
  ['os-quota-sets', 'Quotas', 'Quota management support.'],
  ['os-availability-zone', 'AvailabilityZones', 'Describe availability zones.'],
  ['os-volume-encryption-metadata', 'VolumeEncryptionMetadata', 'Volume encryption metadata.'],
  ['backups', 'Backups', 'Backups support.'],
  ['os-snapshot-actions', 'SnapshotActions', 'Enable snapshot manager actions.'],
  ['os-volume-actions', 'VolumeActions', 'Enable volume actions.'],
  ['os-snapshot-manage', 'SnapshotManage', 'Allows existing back-end storage to be managed as snapshots.'],
  ['os-volume-unmanage', 'VolumeUnmanage', 'Enable volume unmanage operation.'],
  ['consistencygroups', 'Consistencygroups', 'Consistency groups support.'],
  ['os-vol-host-attr', 'VolumeHostAttribute', 'Expose host as an attribute of a volume.'],
  ['encryption', 'VolumeTypeEncryption', 'Encryption support for volume types.'],
  ['os-vol-image-meta', 'VolumeImageMetadata', 'Show image metadata associated with the volume.'],
  ['os-types-manage', 'TypesManage', 'Types manage support.'],
  ['capabilities', 'Capabilities', 'Capabilities support.'],
  ['cgsnapshots', 'Cgsnapshots', 'cgsnapshots support.'],
  ['os-types-extra-specs', 'TypesExtraSpecs', 'Type extra specs support.'],
  ['os-used-limits', 'UsedLimits', 'Provide data on limited resources that are being used.'],
  [
    'os-vol-mig-status-attr',
    'VolumeMigStatusAttribute',
    'Expose migration_status as an attribute of a volume.',
  ],
  ['os-volume-type-access', 'VolumeTypeAccess', 'Volume type access support.'],
  ['os-extended-services', 'ExtendedServices', 'Extended services support.'],
  ['os-extended-snapshot-attributes', 'ExtendedSnapshotAttributes', 'Extended snapshot attributes.'],
  ['os-snapshot-unmanage', 'SnapshotUnmanage', 'Enable snapshot unmanage operation.'],
  ['qos-specs', 'Qos_specs_manage', 'QoS specs support.'],
  ['os-quota-class-sets', 'QuotaClasses', 'Quota classes management support.'],
  ['os-volume-transfer', 'VolumeTransfer', 'Volume transfer management support.'],
  ['os-volume-manage', 'VolumeManage', 'Allows existing back-end storage to be managed by the service.'],
  ['os-admin-actions', 'AdminActions', 'Enable admin actions.'],
  ['os-services', 'Services', 'Services support.'],
  ['scheduler-stats', 'Scheduler_stats', 'Scheduler stats support.'],
  ['OS-SCH-HNT', 'SchedulerHints', 'Pass arbitrary key/value pairs to the scheduler.'],
];

const view = ([alias, name, description]: readonly [string, string, string]) => ({
  alias,
  name,
  description,
  updated: '2013-04-18T00:00:00+00:00',
  links: [],
});

/** `/extensions` (BS-7.1.1). */
@Controller(routes('extensions'))
export class ExtensionsController {
  @Get()
  list() {
    return { extensions: EXTENSIONS.map(view) };
  }

  @Get(':alias')
  show(@Param('alias') alias: string) {
    const e = EXTENSIONS.find((x) => x[0] === alias);
    if (!e) throw new NotFoundError('Extension', alias, `Extension ${alias} could not be found.`);
    return { extension: view(e) };
  }
}
