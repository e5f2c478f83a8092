// The same-run reference for the hostile-payloads timing test: a bare fastify server with the
// service's two routes reduced to what any JSON API does (parse the body, answer), in its own
// process, so the machine's noise and JSON parsing itself are measured apart from the service.
import Fastify from 'fastify';

const app = Fastify({ bodyLimit: 1024 * 1024 });
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/v1/workflows', async (_request, reply) => reply.code(400).send({ code: 'VALIDATION_ERROR' }));
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
