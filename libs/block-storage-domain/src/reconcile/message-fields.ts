/**
 * Cinder's user-message fields (`cinder/message/message_field.py`): an action (what was being
 * done) and a detail (what went wrong). The event id is `VOLUME_<resource type>_<action id>_<detail
 * id>` and the text shown to users is `<action>:<detail>`. Ids and texts are upstream's, except the
 * actions marked local: Cinder records no message for them, and their ids (9xx) stay clear of
 * upstream's numbering.
 */
export const MESSAGE_ACTIONS = {
  'schedule-allocate-volume': ['001', 'schedule allocate volume'],
  'attach-volume': ['002', 'attach volume'],
  'copy-volume-to-image': ['003', 'copy volume to image'],
  'update-attachment': ['004', 'update attachment'],
  'copy-image-to-volume': ['005', 'copy image to volume'],
  'unmanage-volume': ['006', 'unmanage volume'],
  'extend-volume': ['007', 'extend volume'],
  'create-volume-from-backend': ['008', 'create volume from backend storage'],
  'snapshot-create': ['009', 'create snapshot'],
  'snapshot-delete': ['010', 'delete snapshot'],
  'snapshot-update': ['011', 'update snapshot'],
  'backup-create': ['013', 'create backup'],
  'backup-delete': ['014', 'delete backup'],
  'backup-restore': ['015', 'restore backup'],
  /** Local: Cinder's volume delete fails silently into error_deleting. */
  'delete-volume': ['901', 'delete volume'],
  /** Local: revert to snapshot. */
  'revert-volume': ['902', 'revert volume to snapshot'],
  /** Local: migration and on-demand retype. */
  'migrate-volume': ['903', 'migrate volume'],
} as const;

export const MESSAGE_DETAILS = {
  'unknown-error': ['001', 'An unknown error occurred.'],
  'driver-not-initialized': ['002', 'Driver is not initialized at present.'],
  'no-backend': ['003', 'Could not find any available weighted backend.'],
  'failed-to-upload-volume': ['004', 'Failed to upload volume to image at backend.'],
  'driver-failed-extend': ['010', 'Volume Driver failed to extend volume.'],
  'driver-failed-create': ['012', 'Driver failed to create the volume.'],
  'snapshot-create-error': ['013', 'Snapshot failed to create.'],
  'snapshot-delete-error': ['016', 'Snapshot failed to delete.'],
  'backup-service-down': ['018', 'Backup service is down.'],
  'backup-create-driver-error': ['020', 'Backup driver failed to create backup.'],
  'attach-error': ['021', 'Failed to attach volume.'],
  'detach-error': ['022', 'Failed to detach volume.'],
  'backup-delete-driver-error': ['025', 'Backup driver failed to delete backup.'],
  'backup-restore-error': ['026', 'Backup driver failed to restore backup.'],
  'volume-invalid-state': ['027', 'Volume status is invalid.'],
} as const;

export type MessageAction = keyof typeof MESSAGE_ACTIONS;
export type MessageDetail = keyof typeof MESSAGE_DETAILS;

/** Cinder's `Resource` values: the message's `resource_type` and the middle of its event id. */
export const MESSAGE_RESOURCE_TYPES = ['VOLUME', 'VOLUME_SNAPSHOT', 'VOLUME_BACKUP'] as const;
export type MessageResourceType = (typeof MESSAGE_RESOURCE_TYPES)[number];

/** A user message to record: which action failed and why, by upstream ids. */
export interface UserMessageRef {
  readonly action: MessageAction;
  readonly detail: MessageDetail;
}
