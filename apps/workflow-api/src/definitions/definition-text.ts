import { createHash } from 'node:crypto';

/** `checksum` of a stored definition: MD5 hex of its UTF-8 text, as Mistral computes it. */
export const definitionChecksum = (text: string): string =>
  createHash('md5').update(text, 'utf8').digest('hex');
