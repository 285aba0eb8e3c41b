import type { SnapshotStatus } from '../state/snapshot-status';
import type { VolumeStatus } from '../state/volume-status';

/**
 * Domain values of the block-storage resources. Apps map rows to these (`*.mapper.ts`); views
 * render them per microversion. Timestamps are Dates or already-formatted strings with
 * microseconds (Postgres keeps microseconds; JS Dates keep milliseconds).
 */
export type Timestamp = Date | string;

export interface VolumeTypeValue {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly isPublic: boolean;
  readonly extraSpecs: Readonly<Record<string, string | null>>;
  readonly qosSpecsId: string | null;
}

export interface AttachmentValue {
  readonly id: string;
  readonly volumeId: string;
  readonly serverId: string | null;
  readonly hostName: string | null;
  readonly device: string | null;
  readonly attachedAt: Timestamp | null;
  readonly attachStatus: string;
}

export interface VolumeValue {
  readonly id: string;
  readonly projectId: string;
  readonly userId: string | null;
  readonly name: string | null;
  readonly description: string | null;
  readonly size: number;
  readonly status: VolumeStatus;
  readonly availabilityZone: string | null;
  readonly volumeTypeId: string;
  readonly volumeTypeName: string | null;
  readonly snapshotId: string | null;
  readonly sourceVolid: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  /** Admin metadata; only `readonly` and `attached_mode` are ever shown (BS-7.7.9). */
  readonly adminMetadata: Readonly<Record<string, string>>;
  readonly imageMetadata: Readonly<Record<string, string>> | null;
  readonly bootable: boolean;
  readonly encrypted: boolean;
  readonly encryptionKeyId: string | null;
  readonly multiattach: boolean;
  readonly host: string | null;
  readonly clusterName: string | null;
  readonly providerId: string | null;
  readonly serviceUuid: string | null;
  readonly sharedTargets: boolean | null;
  readonly migrationStatus: string | null;
  readonly nameId: string | null;
  readonly replicationStatus: string | null;
  readonly consistencygroupId: string | null;
  readonly groupId: string | null;
  readonly consumesQuota: boolean;
  readonly attachments: readonly AttachmentValue[];
  readonly createdAt: Timestamp;
  readonly updatedAt: Timestamp | null;
}

export interface SnapshotValue {
  readonly id: string;
  readonly projectId: string;
  readonly userId: string | null;
  readonly volumeId: string;
  readonly name: string | null;
  readonly description: string | null;
  readonly size: number;
  readonly status: SnapshotStatus;
  readonly progress: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly groupSnapshotId: string | null;
  readonly consumesQuota: boolean;
  readonly createdAt: Timestamp;
  readonly updatedAt: Timestamp | null;
}

export interface EncryptionValue {
  readonly encryptionId: string;
  readonly volumeTypeId: string;
  readonly provider: string;
  readonly cipher: string | null;
  readonly keySize: number | null;
  readonly controlLocation: string;
  readonly createdAt: Timestamp;
  readonly updatedAt: Timestamp | null;
}
