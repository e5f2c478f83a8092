import { execFileSync } from 'node:child_process';

/**
 * Installs a Debian package a suite needs and this machine lacks (the machines may install from
 * Debian, never download a tool's own binaries). Only as root; otherwise it fails naming the
 * command to run, so a suite never skips itself for want of a tool.
 */
export function installDebianPackage(pkg: string, neededFor: string): void {
  if (process.getuid?.() !== 0) {
    throw new Error(`${neededFor} needs Debian's ${pkg}: run "apt-get install -y ${pkg}"`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env, timeout: 600_000 });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], {
    stdio: 'inherit',
    env,
    timeout: 900_000,
  });
}
