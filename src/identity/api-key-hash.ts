import { createHash } from 'node:crypto';

/** What the Go agent compares on start-up to decide whether to re-enroll (docs/protocol.md §4). */
export function apiKeyHash(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}
