import { ValidationError } from '../domain/errors.js';

/**
 * The configured keys as both API key stores (store/sqlite/api-keys.repo.ts,
 * store/postgres/api-keys.ts) write them: one tenant per key hash, or ValidationError when one key
 * is bound to two tenants (either tenant could then act as the other).
 */
export function keysByHash(keys: ReadonlyArray<{ tenantId: string; keyHash: string }>): Map<string, string> {
  const tenantByHash = new Map<string, string>();
  for (const { tenantId, keyHash } of keys) {
    const bound = tenantByHash.get(keyHash);
    if (bound !== undefined && bound !== tenantId) {
      throw new ValidationError('An API key is configured for more than one tenant', [
        { path: 'API_KEYS', message: `the same key is bound to tenants ${bound} and ${tenantId}` },
      ]);
    }
    tenantByHash.set(keyHash, tenantId);
  }
  return tenantByHash;
}
