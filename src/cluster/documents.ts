// Functions travel as weft's serialized document (JSON that loading never runs as code), stored
// in Redis under the hash of its text. The hash is the function's identity: a worker that loads a
// document checks its text against the hash it was asked for, so a document stored under a wrong
// name is refused before it is read.
import { createHash } from 'node:crypto';

/** The hex SHA-256 of a document's text. */
export function documentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The Redis key of a document, beside its queue's keys. */
export function documentKey(prefix: string, queue: string, hash: string): string {
  return `${prefix}:${queue}:weft-fn:${hash}`;
}

/** The refusal of a document whose text does not have the hash it is stored under. */
export function checkDocument(text: string | null, hash: string, key: string): string {
  if (text === null) throw new Error(`weft.cluster: no function document at ${key} (the caller stores it on connect; was Redis flushed?)`);
  const actual = documentHash(text);
  if (actual !== hash) throw new Error(`weft.cluster: the document at ${key} has hash ${actual}, not ${hash}: refused unread`);
  return text;
}
