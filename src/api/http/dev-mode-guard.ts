import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Config, isDevMode } from '../../config.js';
import { errorBody } from './error-handler.js';

/**
 * Without API keys every request is the dev tenant's, so the only thing between a web page the
 * user happens to visit and the API is the browser. Two doors stay shut:
 * - DNS rebinding: a page on `evil.example` whose name is re-pointed at 127.0.0.1 is same-origin
 *   with the API, so it may read anything. Only requests addressed to a loopback host name are
 *   answered (`Host: 127.0.0.1`, `localhost`, `[::1]`, any port).
 * - Cross-site writes: a page may send a "simple" POST (no preflight) with no body, or a text/plain
 *   one, to `…/approve` or `…/cancel`. Browsers name the page's origin on every such request
 *   (`Origin`, and `Sec-Fetch-Site` in current ones), so a state-changing request from another
 *   origin than the API's own is refused. Clients that are not browsers (curl, SDKs, services)
 *   send neither header and are unaffected, which keeps `curl -X POST …/cancel` working.
 * With API keys set neither applies: a browser cannot attach the bearer key cross-site.
 */

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function forbidden(reply: FastifyReply, message: string): FastifyReply {
  return reply.code(403).send(errorBody(403, 'FORBIDDEN', message));
}

/** Whether a browser says this request comes from a page of another origin than `host`. */
function crossOrigin(request: FastifyRequest, host: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host.toLowerCase() !== host.toLowerCase();
  } catch {
    return true; // "null" (sandboxed frames, file: pages) or garbage: not this origin
  }
}

export function registerDevModeGuard(app: FastifyInstance, config: Config): void {
  if (!isDevMode(config)) return;
  app.addHook('onRequest', async (request, reply) => {
    const host = request.headers.host ?? '';
    if (!LOOPBACK_HOST.test(host)) {
      return forbidden(
        reply,
        'without API_KEYS the service answers only requests addressed to a loopback host (127.0.0.1, localhost, [::1]); set API_KEYS to serve other hosts',
      );
    }
    if (!SAFE_METHODS.has(request.method) && crossOrigin(request, host)) {
      return forbidden(
        reply,
        "without API_KEYS a state-changing request from another origin's page is refused (cross-site request forgery); send it from this origin or without a browser",
      );
    }
  });
}
