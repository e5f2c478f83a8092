/**
 * `npm run bench`: runs each benchmark in its own child process, one after the other, so that
 * neither shares a heap, JIT state or CPU with another, and prints each one's single JSON line.
 * Exits non-zero when any benchmark fails (non-zero exit, or no JSON line on stdout).
 *
 *   npm run bench                 # all of them
 *   npm run bench -- executor     # only those named
 *   npm run bench -- http-steps   # the HTTP job vs the LangGraph peer (`npm run bench:peers` once first)
 *   npm run bench -- scale        # baton over PostgreSQL vs SQLite, and 2 instances vs 1
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = ['executor', 'submit', 'cache', 'spans', 'fts', 'http-steps', 'scale'] as const;

function runOne(name: string): Promise<string | undefined> {
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout
        .split('\n')
        .reverse()
        .find((l) => l.startsWith('{'));
      if (code !== 0 || line === undefined) {
        if (line !== undefined) console.log(line);
        process.stderr.write(stdout);
        resolve(undefined);
      } else resolve(line);
    });
  });
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const selected = wanted.length > 0 ? BENCHMARKS.filter((b) => wanted.includes(b)) : [...BENCHMARKS];
  let failed = 0;
  for (const name of selected) {
    const line = await runOne(name);
    if (line === undefined) {
      failed++;
      console.error(`bench ${name}: failed`);
    } else console.log(line);
  }
  if (failed > 0) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
