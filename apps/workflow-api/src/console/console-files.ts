import { readFile } from 'node:fs/promises';
import path from 'node:path';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
};

/** A file of the built console, ready to send. */
export interface ConsoleFile {
  readonly body: Buffer;
  readonly contentType: string;
  /** Vite names assets by content hash: they never change, so browsers may keep them. */
  readonly immutable: boolean;
}

/**
 * The file a `/console/...` path names inside `dir`, or the app's `index.html` for any other path
 * (client-side routes such as `/console/executions/{id}`). Paths that climb out of `dir` and
 * missing assets are null (404). Throws when `index.html` itself is missing (console not built).
 */
export async function resolveConsoleFile(dir: string, urlPath: string): Promise<ConsoleFile | null> {
  const rel = decodeURIComponent(urlPath.replace(/^\/console\/?/, ''));
  const root = path.resolve(dir);
  if (rel.startsWith('assets/') || /\.[a-z0-9]+$/i.test(rel)) {
    const file = path.resolve(root, rel);
    if (!file.startsWith(root + path.sep)) return null;
    try {
      const body = await readFile(file);
      return {
        body,
        contentType: CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
        immutable: rel.startsWith('assets/'),
      };
    } catch {
      return null;
    }
  }
  return {
    body: await readFile(path.join(root, 'index.html')),
    contentType: CONTENT_TYPES['.html'] ?? 'text/html',
    immutable: false,
  };
}
