import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

/**
 * Swagger UI at /docs shares its origin with the dashboard, which may keep an API key in the
 * browser's storage: a page that frames /docs (clickjacking "Try it out") or a script injected
 * into it would act with that key. So /docs is never framed and runs only its own files.
 * Swagger UI's React views set `style` attributes, hence 'unsafe-inline' for styles alone (styles
 * cannot run code or send requests under this policy); scripts are the plugin's static files only.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const docsPageOptions: FastifySwaggerUiOptions = {
  routePrefix: '/docs',
  staticCSP: DOCS_CSP,
  uiHooks: {
    onRequest: (_request, reply, done) => {
      // For browsers older than CSP's frame-ancestors.
      reply.header('x-frame-options', 'DENY');
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      done();
    },
  },
};
