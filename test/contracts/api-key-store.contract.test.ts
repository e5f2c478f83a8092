import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/domain/errors.js';
import { API_KEY_STORE_ADAPTERS as ADAPTERS, type OpenedApiKeyStore } from './api-key-store-adapters.js';

/**
 * What every ApiKeyStore adapter promises: `sync` replaces the stored set with the configured one
 * (hashes only), keeps created_at of the keys that stay, refuses one key bound to two tenants and
 * writes nothing then — and, with instances booting at once over one database, loses no key and
 * fails on none. No difference between the adapters.
 */
describe.each(ADAPTERS)('ApiKeyStore contract: $name', (adapter) => {
  let fx: OpenedApiKeyStore;
  beforeEach(async () => {
    fx = await adapter.open();
  });
  afterEach(async () => {
    await fx.close();
  });
  const pairs = async () => (await fx.stored()).map(({ tenantId, keyHash }) => ({ tenantId, keyHash }));

  it('stores the configured key hashes', async () => {
    await fx.keys.sync([
      { tenantId: 'globex', keyHash: 'h-3' },
      { tenantId: 'acme', keyHash: 'h-1' },
      { tenantId: 'acme', keyHash: 'h-2' },
      { tenantId: 'acme', keyHash: 'h-2' },
    ]);
    expect(await pairs()).toEqual([
      { tenantId: 'acme', keyHash: 'h-1' },
      { tenantId: 'acme', keyHash: 'h-2' },
      { tenantId: 'globex', keyHash: 'h-3' },
    ]);
  });

  it('replaces the whole set, keeps created_at of keys that stay and moves a key to its new tenant', async () => {
    await fx.keys.sync([
      { tenantId: 'acme', keyHash: 'kept' },
      { tenantId: 'acme', keyHash: 'moved' },
      { tenantId: 'acme', keyHash: 'revoked' },
    ]);
    await fx.backdate('kept', 1);
    await fx.keys.sync([
      { tenantId: 'acme', keyHash: 'kept' },
      { tenantId: 'initech', keyHash: 'moved' },
      { tenantId: 'globex', keyHash: 'new' },
    ]);
    expect(await pairs()).toEqual([
      { tenantId: 'acme', keyHash: 'kept' },
      { tenantId: 'globex', keyHash: 'new' },
      { tenantId: 'initech', keyHash: 'moved' },
    ]);
    expect((await fx.stored()).find((k) => k.keyHash === 'kept')?.createdAt).toBe(1);
  });

  it('clears every key when synced with none', async () => {
    await fx.keys.sync([{ tenantId: 'acme', keyHash: 'h' }]);
    await fx.keys.sync([]);
    expect(await fx.stored()).toEqual([]);
  });

  it('refuses one key bound to two tenants and writes nothing', async () => {
    await fx.keys.sync([{ tenantId: 'acme', keyHash: 'before' }]);
    const attempt = fx.keys.sync([
      { tenantId: 'acme', keyHash: 'shared' },
      { tenantId: 'globex', keyHash: 'shared' },
    ]);
    await expect(attempt).rejects.toBeInstanceOf(ValidationError);
    expect(await pairs()).toEqual([{ tenantId: 'acme', keyHash: 'before' }]);
  });

  it('loses no key and fails on none when instances boot together', async () => {
    const configured = Array.from({ length: 40 }, (_, i) => ({ tenantId: `t${i % 5}`, keyHash: `hash-${i}` }));
    const instances = [fx.keys, fx.peer(), fx.peer(), fx.peer()];
    for (let round = 0; round < 5; round++) {
      await fx.keys.sync([{ tenantId: 'old', keyHash: `stale-${round}` }]);
      await Promise.all(instances.map((keys) => keys.sync(configured)));
      expect(await pairs()).toEqual(
        [...configured].sort((a, b) => a.tenantId.localeCompare(b.tenantId) || (a.keyHash < b.keyHash ? -1 : 1)),
      );
    }
  });
});
