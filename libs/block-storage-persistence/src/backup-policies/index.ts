import { CreateBackupPolicies1765650000000 } from './backup-policy.migration';
import { AddBackupPolicyOutcome1765660000000 } from './backup-policy-outcome.migration';

export * from './backup-policy.repository';

// Backup policies (ours): migrations (registered in blockStorageMigrations).
export const backupPolicyMigrations: (new (...args: never[]) => unknown)[] = [
  CreateBackupPolicies1765650000000,
  AddBackupPolicyOutcome1765660000000,
];
