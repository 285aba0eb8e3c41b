// What the writer (backup-writer.ts) and the reader (backup-reader.ts) of the chunked backup format
// share: where a backup's objects are, how a running job is told to stop, and the stored manifest.
import { InvalidInputError } from '@osc/errors';
import { manifestObjectName, parseManifestObjects, type ManifestObject } from '@osc/block-storage-domain';
import type { BackupStore } from './stores';

/** Where a backup's objects live: the container and the object-name prefix (its service_metadata). */
export interface BackupLocation {
  readonly container: string;
  readonly prefix: string;
}

/** Thrown when the backup left the status the operation needs (deleted, force-deleted, reset). */
export class BackupCancelledError extends Error {}

/**
 * A running job's progress report: `done` of `total` bytes; resolves false when the job must stop
 * (the backup left the status the job needs). Called at least once per chunk's worth of bytes.
 */
export type ProgressReport = (done: number, total: number) => Promise<boolean>;

/** Reads a backup's manifest and checks the stored data objects are exactly the listed ones (BS-11.7). */
export async function readManifest(
  store: BackupStore,
  loc: BackupLocation,
): Promise<{ objects: ManifestObject[]; volumeMeta: string | null }> {
  let text: string;
  try {
    text = (await store.read(loc.container, manifestObjectName(loc.prefix))).toString('utf8');
  } catch {
    throw new InvalidInputError(`Invalid backup: the manifest ${manifestObjectName(loc.prefix)} is missing.`);
  }
  const objects = parseManifestObjects(text);
  const stored = new Set(await store.list(loc.container, `${loc.prefix}-`));
  const listed = new Set(objects.map((x) => x.name));
  if (stored.size !== listed.size || [...listed].some((n) => !stored.has(n))) {
    throw new InvalidInputError(
      `Invalid backup: the stored objects of ${loc.prefix} do not match its manifest.`,
    );
  }
  const doc = JSON.parse(text) as { volume_meta?: unknown };
  return { objects, volumeMeta: typeof doc.volume_meta === 'string' ? doc.volume_meta : null };
}
