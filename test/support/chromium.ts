import { existsSync } from 'node:fs';
import { installDebianPackage } from './debian-package.js';

/**
 * Debian's Chromium for the browser tests (the only browser these machines may have: no download
 * of a test tool's own browser). A fresh machine lacks it until the project installs it, so the
 * test installs the Debian package when it runs as root; otherwise it says what to run.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Flags that keep Chromium off the network it cannot reach here (it only talks to 127.0.0.1). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Chromium still calls Google on its own (an on-demand component update check, accounts,
  // autofill) whatever the flags above say; a proxy trap caught it. Those service URLs point at
  // a closed loopback port instead, so the browser's own requests never leave the machine either.
  '--component-updater=url-source=http://127.0.0.1:9/',
  '--gaia-url=http://127.0.0.1:9/',
  '--google-apis-url=http://127.0.0.1:9/',
  '--lso-url=http://127.0.0.1:9/',
  '--autofill-server-url=http://127.0.0.1:9/',
];

export function ensureChromium(): string {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  installDebianPackage('chromium', `the browser tests (${CHROMIUM_PATH} is missing)`);
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} is still missing`);
  return CHROMIUM_PATH;
}
