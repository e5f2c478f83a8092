import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';

/**
 * `npm run openapi`: writes openapi/openapi.json from the routes' own schemas. The committed file
 * is checked against what the app serves by test/api/openapi-drift.test.ts.
 */
export const OPENAPI_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'openapi', 'openapi.json');

/** The document as committed: two-space indent and a trailing newline. */
export function formatOpenApi(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

async function main(): Promise<void> {
  const deps = await createDeps(loadConfig({ DATABASE_PATH: ':memory:', LOG_LEVEL: 'silent' }));
  const app = await buildApp(deps);
  try {
    await app.ready();
    await mkdir(dirname(OPENAPI_PATH), { recursive: true });
    await writeFile(OPENAPI_PATH, formatOpenApi(app.swagger()));
    process.stdout.write(`wrote ${OPENAPI_PATH}\n`);
  } finally {
    await app.close();
    await deps.close();
  }
}

// Only when run as a script: the drift test imports the helpers above.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
