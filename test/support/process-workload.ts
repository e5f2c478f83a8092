import { seededRandom } from '../../src/metrics/selection.js';
import { errorBody, type FakeReply, textMessage, toolUseMessage } from './fake-anthropic.js';

/**
 * The workloads of the process suites (test/process/): plain prompt sequences (shutdown,
 * crash-resume) and, for crash-cycles, definitions mixing sequences, parallel branches,
 * prompt-level reflection, an agent tool and spawned child workflows, all on `anthropic/*` (the
 * real SDK against the fake), and the fake's script that answers them.
 *
 * Every prompt's user message starts with the line "<tag> <node>" (the tag is unique per
 * workflow), and a spawned child's with "<tag> child" (one spawn per workflow), so that first line
 * — the node's *identity* — names the node a provider request is for, in the request log and in
 * the database alike. Answers depend only on the identity and the conversation's length, so the
 * output every node must end with is known in advance.
 */

export const MODEL = 'anthropic/claude-sonnet-5-5';
export const KINDS = ['sequence', 'parallel', 'reflection', 'tools', 'spawn', 'mixed'] as const;
export type Kind = (typeof KINDS)[number];

/** What a prompt does, read from its name's prefix (the fake answers by it). */
export type Role = 'text' | 'reflect' | 'tool' | 'spawn';

export interface PromptPlan {
  name: string;
  role: Role;
  /** data key → the step whose output it carries. */
  data: Record<string, string>;
}

export interface WorkflowPlan {
  tag: string;
  kind: Kind;
  prompts: PromptPlan[];
  /** The workflow's output once completed: its last step's answer. */
  output: unknown;
  definition: Record<string, unknown>;
}

export function roleOf(nodeName: string): Role {
  if (nodeName.startsWith('reflect-')) return 'reflect';
  if (nodeName.startsWith('tool-')) return 'tool';
  if (nodeName.startsWith('spawn-')) return 'spawn';
  return 'text';
}

/** Provider calls of a tool node's loop: 9 tool turns, then the answer (a crash lands mid-loop). */
export const TOOL_LOOP_CALLS = 10;

/** How many provider answers a node needs: a spawn and a reflected answer take two turns. */
export function turnsOf(role: Role): number {
  if (role === 'tool') return TOOL_LOOP_CALLS;
  return role === 'text' ? 1 : 2;
}

export const identityOf = (tag: string, nodeName: string): string => `${tag} ${nodeName}`;
/** A spawning node asks for one child, whose one prompt is "<tag> child". */
export const spawnedIdentity = (tag: string): string => identityOf(tag, 'child');

/** The output a completed node must have stored. */
export function expectedOutput(identity: string): unknown {
  const node = identity.split(' ')[1] ?? '';
  return roleOf(node) === 'reflect' ? { verdict: 'ok' } : `answer(${identity})`;
}

/** The response format a reflecting node's first answer breaks and its second answer meets. */
const VERDICT = {
  type: 'object',
  required: ['verdict'],
  additionalProperties: false,
  properties: { verdict: { enum: ['ok'] } },
};

const AGENT_OF: Record<Role, string> = { text: 'writer', reflect: 'checker', tool: 'scout', spawn: 'spawner' };

function agentConfig(role: Role): Record<string, unknown> {
  if (role === 'tool') return { model: MODEL, tools: ['inspect_current_node'] };
  if (role === 'spawn') return { model: MODEL, tools: ['request_spawn_workflow'] };
  return { model: MODEL };
}

/** The user message the engine must send (README: the text, a blank line, one block per data key). */
export function expectedUserMessage(tag: string, prompt: PromptPlan): string {
  const blocks = Object.entries(prompt.data).map(
    ([key, step]) => `<${key}>\n${JSON.stringify(expectedOutput(identityOf(tag, step)), null, 2)}\n</${key}>`,
  );
  const text = identityOf(tag, prompt.name);
  return blocks.length === 0 ? text : `${text}\n\n${blocks.join('\n\n')}`;
}

function promptNode(prompt: PromptPlan): Record<string, unknown> {
  const node: Record<string, unknown> = {
    type: 'prompt',
    name: prompt.name,
    agent: AGENT_OF[prompt.role],
    user: `{{input.tag}} ${prompt.name}`,
  };
  if (Object.keys(prompt.data).length > 0) {
    node.data = Object.fromEntries(Object.entries(prompt.data).map(([key, step]) => [key, `{{steps.${step}.output}}`]));
  }
  if (prompt.role === 'reflect') Object.assign(node, { enableReflection: true, responseFormat: VERDICT });
  if (prompt.role === 'tool') node.maxTurns = TOOL_LOOP_CALLS + 2;
  return node;
}

const p = (name: string, data: Record<string, string> = {}): PromptPlan => ({ name, role: roleOf(name), data });

/**
 * A sequence of `steps` text prompts "<tag> step-<n>" on one agent; `chained`, each step after the
 * first also gets the one before's output as `prev`.
 */
export function sequenceDefinition(
  name: string,
  tag: string,
  steps: number,
  { chained = false, options }: { chained?: boolean; options?: Record<string, unknown> } = {},
): Record<string, unknown> & { input: { tag: string } } {
  const prompts = Array.from({ length: steps }, (_, s) =>
    p(`step-${s + 1}`, chained && s > 0 ? { prev: `step-${s}` } : {}),
  );
  return {
    name,
    input: { tag },
    ...(options ? { options } : {}),
    agents: { writer: { model: MODEL } },
    root: { type: 'sequence', name: 'main', steps: prompts.map(promptNode) },
  };
}

/** The root node of one kind, as a tree of prompt plans (containers are plain objects). */
function shape(kind: Kind, random: () => number): { root: Record<string, unknown>; prompts: PromptPlan[] } {
  const prompts: PromptPlan[] = [];
  const leaf = (plan: PromptPlan) => {
    prompts.push(plan);
    return promptNode(plan);
  };
  const sequence = (steps: Record<string, unknown>[]) => ({ type: 'sequence', name: 'main', steps });
  switch (kind) {
    case 'sequence': {
      const steps = 2 + Math.floor(random() * 3);
      return {
        root: sequence(
          Array.from({ length: steps }, (_, s) => leaf(p(`step-${s + 1}`, s === 0 ? {} : { prev: `step-${s}` }))),
        ),
        prompts,
      };
    }
    case 'parallel': {
      const width = 2 + Math.floor(random() * 2);
      const branches = Array.from({ length: width }, (_, b) => `branch-${b + 1}`);
      return {
        root: sequence([
          leaf(p('step-1')),
          { type: 'parallel', name: 'fan', steps: branches.map((b) => leaf(p(b, { prev: 'step-1' }))) },
          leaf(p('step-2', Object.fromEntries(branches.map((b, i) => [`b${i + 1}`, b])))),
        ]),
        prompts,
      };
    }
    case 'reflection':
      return {
        root: sequence([
          leaf(p('step-1')),
          leaf(p('reflect-2', { prev: 'step-1' })),
          leaf(p('step-3', { verdict: 'reflect-2' })),
        ]),
        prompts,
      };
    case 'tools':
      return { root: sequence([leaf(p('tool-1')), leaf(p('step-2', { prev: 'tool-1' }))]), prompts };
    case 'spawn':
      return {
        root: sequence([
          leaf(p('step-1')),
          leaf(p('spawn-2', { prev: 'step-1' })),
          leaf(p('step-3', { prev: 'spawn-2' })),
        ]),
        prompts,
      };
    case 'mixed':
      return {
        root: sequence([
          { type: 'parallel', name: 'fan', steps: [leaf(p('reflect-1')), leaf(p('tool-2')), leaf(p('spawn-3'))] },
          leaf(p('step-4', { r: 'reflect-1', t: 'tool-2', s: 'spawn-3' })),
        ]),
        prompts,
      };
  }
}

/** `count` workflows, kinds taking turns from a seeded offset, shapes drawn from the seed. */
export function planWorkflows(count: number, seed: number, run: string): WorkflowPlan[] {
  const random = seededRandom(seed);
  const offset = Math.floor(random() * KINDS.length);
  return Array.from({ length: count }, (_, i) => {
    const kind = KINDS[(i + offset) % KINDS.length] ?? 'sequence';
    const tag = `wf${String(i).padStart(3, '0')}-${run}`;
    const { root, prompts } = shape(kind, random);
    const roles = [...new Set(prompts.map((prompt) => prompt.role))];
    const last = prompts.at(-1);
    return {
      tag,
      kind,
      prompts,
      output: last ? expectedOutput(identityOf(tag, last.name)) : null,
      definition: {
        name: `crash-${kind}-${i}`,
        input: { tag },
        // The cache off: only a committed turn spares a provider request after a kill. A workflow's
        // deadline counts from its start across lives: the soak's 20 lives of 10-call loops pass
        // the 600 s default, which would fail a workflow the kills only delayed.
        options: { cache: false, timeoutMs: 3_600_000 },
        agents: Object.fromEntries(roles.map((role) => [AGENT_OF[role], agentConfig(role)])),
        root,
      },
    };
  });
}

// --- the fake provider's script -------------------------------------------------------------------

/** FNV-1a: a stable 32-bit hash, so a fault decision depends on what is asked, not on arrival order. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export type Outcome = 'ok' | 'rate_limited' | 'overloaded';

export interface FaultPlan {
  outcome: Outcome;
  delayMs: number;
}

/**
 * The issue's provider: 50–500 ms of latency, 5% 429 with `retry-after: 1`, 2% 529. Drawn from
 * (seed, what is asked, which time it is asked), so a replay with the same seed faults the same
 * calls whatever order requests arrive in.
 */
export function faultFor(seed: number, draw: string): FaultPlan {
  const random = seededRandom(hash(`${seed}|${draw}`));
  const u = random();
  const outcome: Outcome = u < 0.05 ? 'rate_limited' : u < 0.07 ? 'overloaded' : 'ok';
  return { outcome, delayMs: 50 + Math.floor(random() * 451) };
}

export function faultReply(outcome: Exclude<Outcome, 'ok'>, delayMs: number): FakeReply {
  return outcome === 'rate_limited'
    ? { status: 429, headers: { 'retry-after': '1' }, body: errorBody('rate_limit_error', 'slow down'), delayMs }
    : { status: 529, body: errorBody('overloaded_error', 'overloaded'), delayMs };
}

/**
 * The answer to a conversation of `turns` messages: text nodes answer at once; a reflecting node
 * first breaks the response format, then meets it; a tool node calls inspect_current_node for
 * TOOL_LOOP_CALLS - 1 turns, a spawning node first spawns "<tag> child", then both answer. The
 * answers depend on the question only, but for the spawn's words: its description says which server
 * `life` asked, so a spawn replayed after a kill asks for its child in other words.
 */
export function answerFor(identity: string, turns: number, life: number): unknown {
  const [tag = '?', node = '?'] = identity.split(' ');
  const role = roleOf(node);
  if (turns === 1 && role === 'reflect') return textMessage('{"verdict": "maybe"}');
  if (role === 'tool' && (turns + 1) / 2 < TOOL_LOOP_CALLS) return toolUseMessage('inspect_current_node', {});
  if (turns === 1 && role === 'spawn') {
    const description = `${spawnedIdentity(tag)}\n(asked in server life ${life})`;
    return toolUseMessage('request_spawn_workflow', { name: 'child', description });
  }
  const output = expectedOutput(identity);
  return textMessage(typeof output === 'string' ? output : JSON.stringify(output));
}
