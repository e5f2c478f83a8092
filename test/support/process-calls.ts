import Database from 'better-sqlite3';
import type { RecordedRequest } from './fake-anthropic.js';
import { type ServerProcess, waitFor } from './server-process.js';

/**
 * What the process suites (test/process/: shutdown, crash-resume, crash-cycles) share: naming the
 * node a provider request is for, reading workflows from the real server or from its database
 * file, and the accounting of provider calls across kills.
 */

/** The rendered first user message of a Messages API request. */
export function firstUserMessage(request: RecordedRequest): string {
  const body = request.body as { messages?: Array<{ role: string; content: unknown }> } | undefined;
  const content = body?.messages?.[0]?.content;
  if (typeof content !== 'string') throw new Error(`unexpected request body: ${JSON.stringify(request.body)}`);
  return content;
}

/** The tests put "<tag> <node>" on the first line of every prompt: the node a call is for. */
export const callIdentity = (request: RecordedRequest): string => firstUserMessage(request).split('\n')[0] ?? '';

/** Provider requests per node identity. */
export function countByIdentity(requests: readonly RecordedRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of requests) counts.set(callIdentity(request), (counts.get(callIdentity(request)) ?? 0) + 1);
  return counts;
}

/** How many messages the conversation holds: 1 for a first turn, 3 after a tool call or a re-ask. */
export function conversationLength(request: RecordedRequest): number {
  const body = request.body as { messages?: unknown[] } | undefined;
  return body?.messages?.length ?? 0;
}

export const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export interface NodeView {
  name: string;
  type: string;
  status: string;
  attempts: number;
  output: unknown;
  children: NodeView[];
}
export interface WorkflowView {
  id: string;
  status: string;
  output: unknown;
  error?: { code: string; message: string } | null;
  tree: NodeView;
}

export async function getWorkflow(server: ServerProcess, id: string): Promise<WorkflowView> {
  const res = await fetch(`${server.url}/v1/workflows/${id}`);
  if (res.status !== 200) throw new Error(`GET /v1/workflows/${id} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as WorkflowView;
}

/** Polls until every one of `ids` is terminal; their views. */
export function waitAllTerminal(server: ServerProcess, ids: readonly string[], timeoutMs: number) {
  return waitFor(
    'every workflow terminal',
    async () => {
      const views = await Promise.all(ids.map((id) => getWorkflow(server, id)));
      return views.every((v) => TERMINAL.has(v.status)) ? views : undefined;
    },
    timeoutMs,
    50,
  );
}

// --- the database file ---------------------------------------------------------------------------
// Read-only, so also while a server runs on it (WAL readers do not block the writer).

function readDb<T>(dbPath: string, read: (db: Database.Database) => T): T {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** Prompt nodes by identity: "<tag> <node>", the tag being the workflow's `input.tag`. */
export function promptNodes(dbPath: string): Map<string, { status: string; attempts: number }> {
  const rows = readDb(dbPath, (db) =>
    db
      .prepare(
        `SELECT json_extract(w.definition, '$.input.tag') || ' ' || n.name AS identity, n.status, n.attempts
           FROM nodes n JOIN workflows w ON w.id = n.workflow_id WHERE n.type = 'prompt'`,
      )
      .all(),
  ) as Array<{ identity: string; status: string; attempts: number }>;
  return new Map(rows.map((r) => [r.identity, { status: r.status, attempts: r.attempts }]));
}

export function workflowStatuses(dbPath: string): string[] {
  return readDb(dbPath, (db) => db.prepare('SELECT status FROM workflows').pluck().all() as string[]);
}

/** The count a query returns (`SELECT count(*) …`). */
export function countRows(dbPath: string, sql: string): number {
  return readDb(dbPath, (db) => Number(db.prepare(sql).pluck().get()));
}

// --- accounting across kills ---------------------------------------------------------------------

/** One provider request as the fake saw it, tagged with the server life that sent it (1-based). */
export interface LoggedCall {
  life: number;
  identity: string;
  /** Messages in the conversation: which turn of the node's conversation this is. */
  turns: number;
  /** What the fake answered: anything but `ok` makes the engine's transport layer send it again. */
  outcome: string;
}

/** What the store held after one kill: the nodes completed and the turns each node had committed. */
export interface KillState {
  completed: ReadonlySet<string>;
  /** Per node identity, the last turn of its conversation committed (a turnEnd event). */
  committedTurns: ReadonlyMap<string, number>;
}

export interface CallAccount {
  /** Logical calls: requests minus the transport retries of a call the fake failed. */
  logical: number;
  transportRetries: number;
  /** Calls made again although they should not have been (each named, with why). */
  repeated: string[];
  /** Calls made again in a later life that were in flight (not durable) at the kill between. */
  inFlightRecalls: number;
  /** Calls sent in a life whose answer was not durable at the kill that ended it: at most one per node. */
  callsInFlightAtKills: number;
}

/** A conversation of n messages asks for turn (n + 1) / 2: every committed turn adds two messages. */
export const turnOfLength = (messages: number): number => (messages + 1) / 2;

/**
 * Counts *logical* calls. A call is keyed by (node identity, conversation length): a tool loop's
 * later turns and a reflection's re-ask carry 2 more messages per turn, so they are distinct calls
 * with distinct content, while a transport retry re-sends the very same request. Within one server
 * life a key may therefore be requested again only right after the fake failed it (429/529): a
 * repeat after an `ok` answer is a repeated call.
 *
 * Across lives, `kills[k - 1]` holds what the database showed after kill k (life k + 1 starts
 * after it). A call is *durable* at a kill when its node had completed, or had committed the turn
 * the call answered. A durable call must never be sent again; a call in flight at a kill (sent, not
 * durable) may be sent once more in a later life — "at most one repeated request per call in flight
 * at a kill". Since a turn is committed before the next call, a node has at most one call in
 * flight: an earlier call of the node not durable at the kill is reported too.
 */
export function accountCalls(calls: readonly LoggedCall[], kills: readonly KillState[]): CallAccount {
  const account: CallAccount = {
    logical: 0,
    transportRetries: 0,
    repeated: [],
    inFlightRecalls: 0,
    callsInFlightAtKills: 0,
  };
  const durable = (identity: string, turns: number, kill: number) => {
    const state = kills[kill - 1];
    if (state === undefined) return false;
    return state.completed.has(identity) || (state.committedTurns.get(identity) ?? 0) >= turnOfLength(turns);
  };
  const byKey = new Map<string, LoggedCall[]>();
  for (const call of calls) {
    const key = `${call.identity} #${call.turns}`;
    const list = byKey.get(key) ?? [];
    list.push(call);
    byKey.set(key, list);
  }
  /** Per life, per identity: the conversation lengths it asked. */
  const asked = new Map<number, Map<string, number[]>>();
  for (const [key, list] of byKey) {
    const { identity = '', turns = 0 } = list[0] ?? {};
    const lives: number[] = [];
    for (const [i, call] of list.entries()) {
      const previous = list[i - 1];
      if (previous?.life === call.life && previous.outcome !== 'ok') {
        account.transportRetries++;
        continue;
      }
      account.logical++;
      if (lives.includes(call.life)) account.repeated.push(`${key}: called again in life ${call.life}`);
      else lives.push(call.life);
    }
    for (const [n, life] of lives.entries()) {
      const byIdentity = asked.get(life) ?? new Map<string, number[]>();
      byIdentity.set(identity, [...(byIdentity.get(identity) ?? []), turns]);
      asked.set(life, byIdentity);
      const before = lives[n - 1];
      if (before === undefined) continue;
      if (durable(identity, turns, before))
        account.repeated.push(`${key}: durable at kill ${before}, called in life ${life}`);
      else account.inFlightRecalls++;
    }
  }
  for (const [life, byIdentity] of asked) {
    if (kills[life - 1] === undefined) continue;
    for (const [identity, lengths] of byIdentity) {
      const last = Math.max(...lengths);
      for (const turns of lengths) {
        if (durable(identity, turns, life)) continue;
        if (turns === last) account.callsInFlightAtKills++;
        else account.repeated.push(`${identity} #${turns}: not durable at kill ${life}, yet #${last} was asked`);
      }
    }
  }
  return account;
}
