import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installDebianPackage } from './debian-package.js';

/**
 * A throwaway PostgreSQL cluster for the tests: `initdb` in a temporary folder with trust auth for
 * loopback only, a free loopback port and the Unix socket inside the data folder, started with
 * `pg_ctl -w start` and stopped with `pg_ctl stop -m fast`. PostgreSQL refuses to run as root, so
 * as root the cluster belongs to an unprivileged user created once (`baton-pg`). The machines carry
 * the server binaries under /usr/lib/postgresql/<version>/bin; a fresh machine without them gets
 * Debian's postgresql-15 when the tests run as root, and a clear error otherwise: a suite that
 * needs PostgreSQL fails, it never skips.
 */
export interface PostgresCluster {
  /** `postgres://user@127.0.0.1:port/postgres`: the maintenance database; tests create their own. */
  url: string;
  port: number;
  dataDir: string;
  stop(): void;
}

const PG_ROOT = '/usr/lib/postgresql';
const CLUSTER_USER = 'baton-pg';

/** The newest installed server's bin folder (installing Debian's postgresql-15 as root if none). */
export function postgresBinDir(): string {
  const found = newestBinDir();
  if (found) return found;
  installDebianPackage('postgresql-15', `the PostgreSQL suites (no initdb and pg_ctl under ${PG_ROOT})`);
  const installed = newestBinDir();
  if (!installed) throw new Error(`apt-get installed postgresql-15 but ${PG_ROOT}/*/bin/initdb is still missing`);
  return installed;
}

function newestBinDir(): string | undefined {
  if (!existsSync(PG_ROOT)) return undefined;
  const versions = readdirSync(PG_ROOT)
    .filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb')) && existsSync(join(PG_ROOT, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(PG_ROOT, versions[0], 'bin');
}

/** A port the kernel just handed out on 127.0.0.1 (free now; PostgreSQL binds it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Who runs the cluster: this process's user, or (as root) the unprivileged CLUSTER_USER. */
function clusterOwner(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (spawnSync('id', ['-u', CLUSTER_USER]).status !== 0) {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', CLUSTER_USER]);
  }
  const uid = Number(execFileSync('id', ['-u', CLUSTER_USER]).toString().trim());
  const gid = Number(execFileSync('id', ['-g', CLUSTER_USER]).toString().trim());
  return { name: CLUSTER_USER, uid, gid };
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const owner = clusterOwner();
  const root = mkdtempSync(join(tmpdir(), 'baton-pg-'));
  const dataDir = join(root, 'data');
  const run = (tool: string, args: string[]) =>
    execFileSync(join(bin, tool), args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
      ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
      // The owner may not read the caller's working folder.
      cwd: root,
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
    });
  if (owner) {
    chmodSync(root, 0o755);
    execFileSync('chown', [`${owner.uid}:${owner.gid}`, root]);
  }
  const user = owner?.name ?? (execFileSync('id', ['-un']).toString().trim() || 'postgres');
  try {
    run('initdb', ['-D', dataDir, '-U', user, '--auth=trust', '--encoding=UTF8', '--no-sync']);
    const port = await freePort();
    // Loopback TCP and a socket inside the data folder only; no fsync (a throwaway cluster).
    writeFileSync(
      join(root, 'baton.conf'),
      [
        `port = ${port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${dataDir}'`,
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        'max_connections = 200',
        '',
      ].join('\n'),
    );
    if (owner) execFileSync('chown', [`${owner.uid}:${owner.gid}`, join(root, 'baton.conf')]);
    execFileSync(
      'sh',
      ['-c', `echo "include '${join(root, 'baton.conf')}'" >> '${join(dataDir, 'postgresql.conf')}'`],
      {
        ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
      },
    );
    run('pg_ctl', ['-D', dataDir, '-l', join(root, 'server.log'), '-w', '-t', '60', 'start']);
    // A test run that dies without its teardown must not leave a server behind.
    const onExit = () => {
      try {
        run('pg_ctl', ['-D', dataDir, '-w', '-t', '10', 'stop', '-m', 'immediate']);
      } catch {}
      rmSync(root, { recursive: true, force: true });
    };
    process.once('exit', onExit);
    return {
      url: `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/postgres`,
      port,
      dataDir,
      stop() {
        process.off('exit', onExit);
        try {
          run('pg_ctl', ['-D', dataDir, '-w', '-t', '60', 'stop', '-m', 'fast']);
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`the throwaway PostgreSQL cluster did not start: ${(error as Error).message}\n${stderr}`);
  }
}
