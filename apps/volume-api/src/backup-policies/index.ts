import type { Provider, Type } from '@nestjs/common';
import { BackupPoliciesController } from './backup-policies.controller';
import { BackupPoliciesService } from './backup-policies.service';

// Controllers and providers of this area (ours: backup policies), registered in VolumeApiModule.
export const backupPolicyControllers: Type[] = [BackupPoliciesController];
export const backupPolicyProviders: Provider[] = [BackupPoliciesService];
