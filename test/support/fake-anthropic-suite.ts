import { afterAll, afterEach, beforeAll } from 'vitest';
import { type FakeServer, type ReplySource, startFakeAnthropic } from './fake-anthropic.js';
import { stopAllServers, tempDir } from './server-process.js';

export interface FakeAnthropicSuite {
  /** Set once `beforeAll` has run. */
  readonly fake: FakeServer;
  readonly tmp: ReturnType<typeof tempDir>;
  /** The environment that points a server at the fake, plus `extra`. */
  env(extra?: Record<string, string>): Record<string, string>;
}

/**
 * Registers the hooks of a suite that runs the real server against the fake Anthropic server: the
 * fake starts before the suite; every server is stopped after each test (with
 * `stopServersAfterEach`) and after the suite; then the fake is closed and the temporary folder
 * removed, unless `keepFiles()` asks to keep it for a failed run to be looked at.
 */
export function fakeAnthropicSuite(
  prefix: string,
  options: { defaultReply?: ReplySource; stopServersAfterEach?: boolean; keepFiles?(): boolean } = {},
): FakeAnthropicSuite {
  let fake: FakeServer | undefined;
  const suite: FakeAnthropicSuite = {
    get fake() {
      if (!fake) throw new Error('the fake Anthropic server starts in beforeAll');
      return fake;
    },
    tmp: tempDir(prefix),
    env: (extra = {}) => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: suite.fake.url, ...extra }),
  };
  beforeAll(async () => {
    fake = await startFakeAnthropic({ defaultReply: options.defaultReply });
  });
  if (options.stopServersAfterEach) afterEach(stopAllServers);
  afterAll(async () => {
    await stopAllServers();
    await fake?.close();
    if (!options.keepFiles?.()) suite.tmp.cleanup();
  });
  return suite;
}
