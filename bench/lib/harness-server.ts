/**
 * The no-work reference of bench/http-steps.ts: a bare node:http server speaking the job protocol
 * (see http-job.ts) that does nothing but HTTP. `POST /v1/workflows` reads and parses the body and
 * answers 202 with an id; `GET …/events` streams 10 canned step frames and a workflowEnd frame, then
 * ends; `GET /v1/workflows/{id}` answers a canned completed job. Its CPU per step is the floor that
 * the same client traffic costs a Node.js server, persisting nothing.
 */
import { createServer } from 'node:http';

const STEPS = Number(process.env.BENCH_STEPS ?? 10);
const ANSWER = process.env.BENCH_ANSWER_JSON ?? '{}';

let counter = 0;

function stream(id: string): string {
  let text = '';
  for (let i = 1; i <= STEPS; i++) {
    const data = JSON.stringify({ seq: i, type: 'stepEnd', payload: { node: `step-${i}`, id } });
    text += `id: ${i}\nevent: stepEnd\ndata: ${data}\n\n`;
  }
  const end = JSON.stringify({ seq: STEPS + 1, type: 'workflowEnd', payload: { status: 'completed' } });
  return `${text}id: ${STEPS + 1}\nevent: workflowEnd\ndata: ${end}\n\n`;
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (req.method === 'POST' && url === '/v1/workflows') {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const definition = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name?: unknown };
      const id = `job_${(++counter).toString(36)}`;
      res.writeHead(202, { 'content-type': 'application/json', location: `/v1/workflows/${id}` });
      res.end(JSON.stringify({ id, status: 'idle', name: definition.name }));
    });
    return;
  }
  const match = /^\/v1\/workflows\/([^/]+)(\/events)?$/.exec(url);
  if (req.method === 'GET' && match?.[1] && match[2]) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.end(stream(match[1]));
    return;
  }
  if (req.method === 'GET' && match?.[1]) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"id":${JSON.stringify(match[1])},"status":"completed","output":${ANSWER}}`);
    return;
  }
  if (req.method === 'GET' && url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
    return;
  }
  res.writeHead(404).end();
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
