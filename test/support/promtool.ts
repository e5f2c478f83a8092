import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * `promtool check metrics` from Debian's `prometheus` package, the reference linter of the text
 * exposition format. A test that uses it fails when it is missing rather than skip its half of the
 * check: `.ci/run` installs the package on a fresh machine; elsewhere the error says what to run.
 */
export const PROMTOOL_PATH = '/usr/bin/promtool';

/** What `promtool check metrics` printed (stdout and stderr, trimmed) and its exit status. */
export function promtoolCheckMetrics(text: string): { output: string; status: number | null } {
  if (!existsSync(PROMTOOL_PATH)) {
    throw new Error(
      `${PROMTOOL_PATH} is missing: run "apt-get install -y --no-install-recommends prometheus" ` +
        '(the metrics tests lint the exposition with it; .ci/run installs it)',
    );
  }
  const run = spawnSync(PROMTOOL_PATH, ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw run.error;
  return { output: `${run.stdout}${run.stderr}`.trim(), status: run.status };
}
