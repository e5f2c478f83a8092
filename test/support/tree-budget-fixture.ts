import type { FakeReply, RecordedRequest } from './fake-anthropic.js';
import { textMessage, toolUseMessage } from './fake-anthropic.js';

/**
 * A workflow tree that makes 9 provider requests when nothing caps it: the root's prompt `p0` (1),
 * a spawning prompt (2 turns: the spawn, then its answer) whose spawned child answers once (1), a
 * declared `workflow` child of three prompts (3), then `p3` and `p4` (2). Every prompt's first line
 * names it, so the fake can tell the calls apart.
 */
export const TREE_REQUESTS = 9;
export const SPAWN_WORDS = 'Spawn one helper child';

export function treeDefinition(model: string, options: Record<string, unknown> = {}) {
  const prompt = (name: string, agent = 'a') => ({ type: 'prompt', name, agent, user: `tree ${name}` });
  return {
    name: 'budget-tree',
    agents: { a: { model }, s: { model, tools: ['request_spawn_workflow'] } },
    root: {
      type: 'sequence',
      name: 'main',
      steps: [
        prompt('p0'),
        { type: 'prompt', name: 'spawner', agent: 's', user: `tree spawner\n${SPAWN_WORDS}`, maxTurns: 5 },
        {
          type: 'workflow',
          name: 'kid',
          definition: {
            name: 'kid',
            root: { type: 'sequence', name: 'kid-steps', steps: [prompt('k0'), prompt('k1'), prompt('k2')] },
          },
        },
        prompt('p3'),
        prompt('p4'),
      ],
    },
    options: { cache: false, ...options },
  };
}

/** The spawner's first turn asks for a child; every other request is answered with text. */
export function treeReply(request: RecordedRequest): FakeReply {
  const body = request.body as { messages?: Array<{ content: unknown }> };
  const first = body.messages?.[0]?.content;
  const firstTurn = body.messages?.length === 1;
  if (firstTurn && typeof first === 'string' && first.includes(SPAWN_WORDS)) {
    return { body: toolUseMessage('request_spawn_workflow', { name: 'helper', description: 'tree helper task' }) };
  }
  return { body: textMessage('done') };
}
