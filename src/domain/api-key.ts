import { createHash } from 'node:crypto';

/** API keys are stored and compared only as SHA-256 hex digests (docs/design.md#security). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
