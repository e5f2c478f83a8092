import type { RecordedRequest } from './fake-anthropic.js';
import type { ServerProcess } from './server-process.js';

/**
 * What the crash tests (test/e2e/crash-resume.test.ts, test/reliability/crash-cycles.test.ts)
 * share: naming the node a provider request is for, reading a workflow from the real server, and
 * the accounting of provider calls across kills.
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

export interface CallAccount {
  /** Logical calls: requests minus the transport retries of a call the fake failed. */
  logical: number;
  transportRetries: number;
  /** Calls made again although they should not have been (each named, with why). */
  repeated: string[];
  /** Calls made again in a later life for a node that had not completed at the kill between. */
  inFlightRecalls: number;
}

/**
 * Counts *logical* calls. A call is keyed by (node identity, conversation length): a tool loop's
 * second turn and a reflection's re-ask carry 3 messages where the first turn carries 1, so they
 * are distinct calls with distinct content, while a transport retry re-sends the very same
 * request. Within one server life a key may therefore be requested again only right after the
 * fake failed it (429/529): a repeat after an `ok` answer is a repeated call. Across lives,
 * `completedAtKill[k - 1]` holds the identities the database showed completed after kill k (life
 * k + 1 starts after it): a node completed at any earlier kill must never be called again; a
 * node not completed then — in flight, or not yet reached — may be called once in each later
 * life, which is "at most one more call per kill".
 */
export function accountCalls(
  calls: readonly LoggedCall[],
  completedAtKill: ReadonlyArray<ReadonlySet<string>>,
): CallAccount {
  const account: CallAccount = { logical: 0, transportRetries: 0, repeated: [], inFlightRecalls: 0 };
  const byKey = new Map<string, LoggedCall[]>();
  for (const call of calls) {
    const key = `${call.identity} #${call.turns}`;
    const list = byKey.get(key) ?? [];
    list.push(call);
    byKey.set(key, list);
  }
  for (const [key, list] of byKey) {
    const identity = list[0]?.identity ?? '';
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
      // Kill k precedes life k + 1: a node completed at any kill before this life is done.
      const completedAt = completedAtKill.findIndex((done, k) => k + 1 < life && done.has(identity));
      if (completedAt >= 0)
        account.repeated.push(`${key}: completed at kill ${completedAt + 1}, called in life ${life}`);
      else if (n > 0) account.inFlightRecalls++;
    }
  }
  return account;
}
