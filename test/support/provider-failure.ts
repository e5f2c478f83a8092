import { expect } from 'vitest';
import { ProviderError } from '../../src/domain/errors.js';

/** Awaits a provider call that must fail and returns its classified ProviderError. */
export async function providerFailure(call: Promise<unknown>): Promise<ProviderError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}
