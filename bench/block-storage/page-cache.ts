import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** Flushes dirty pages and drops the page cache (root only); false when the kernel refused. */
export function dropCaches(): boolean {
  try {
    execFileSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}
