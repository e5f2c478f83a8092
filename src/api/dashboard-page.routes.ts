import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * The web dashboard (GET /dashboard): static files from the top-level web/ folder and uPlot from
 * its npm package, all served by baton itself (no CDN, no build step). Public like /docs: the page
 * holds no data; its fetches go to /v1 with the key the user typed (in sessionStorage, or localStorage when asked to remember it).
 */

const WEB_DIR = fileURLToPath(new URL('../../web/', import.meta.url));
const UPLOT_DIR = path.dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.esm.js'));

/** Only same-origin scripts, styles, images and fetches; no inline script, no framing. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  type: string;
}

/** url path → file, read once at registration (a handful of small files). */
function assets(): Map<string, Asset> {
  const files: Array<[string, string, string]> = [
    ['/dashboard', path.join(WEB_DIR, 'index.html'), 'text/html; charset=utf-8'],
    ['/dashboard/app.js', path.join(WEB_DIR, 'app.js'), 'text/javascript; charset=utf-8'],
    ['/dashboard/style.css', path.join(WEB_DIR, 'style.css'), 'text/css; charset=utf-8'],
    ['/dashboard/vendor/uPlot.esm.js', path.join(UPLOT_DIR, 'uPlot.esm.js'), 'text/javascript; charset=utf-8'],
    ['/dashboard/vendor/uPlot.min.css', path.join(UPLOT_DIR, 'uPlot.min.css'), 'text/css; charset=utf-8'],
  ];
  return new Map(files.map(([url, file, type]) => [url, { body: readFileSync(file), type }]));
}

function send(reply: FastifyReply, asset: Asset): FastifyReply {
  return reply
    .type(asset.type)
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .send(asset.body);
}

export async function dashboardPageRoutes(app: FastifyInstance): Promise<void> {
  for (const [url, asset] of assets()) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) => send(reply, asset));
  }
  app.get('/dashboard/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 302));
}
