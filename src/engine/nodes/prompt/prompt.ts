import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { agentNameOf, type PromptNode } from '../../../domain/definition.js';
import type { NodeAttempt, NodeContext, NodeHandler } from '../../node-context.js';
import { checkPrompt } from './checks.js';
import { converse } from './conversation.js';
import { reflectOnFailure, reflectOnRequest } from './reflection.js';
import { preparePrompt } from './request.js';
import { runRetrievalLoop } from './retrieval-loop.js';

/**
 * `prompt`: one agent call, a tool loop (conversation.ts) or a retrieval loop (retrieval-loop.ts). Its answer is durable before the run
 * moves on — after a crash the node replays its stored output instead of paying for the call again.
 * A failed attempt may be retried through workflow-level reflection (reflection.ts).
 */
export const promptHandler: NodeHandler<PromptNode> = {
  durable: true,

  run(ctx, node, at) {
    // A routed workflow's agents work `max_agents` at a time
    // (docs/design.md#complexity-allocation-selection-and-review).
    return ctx.agents.run(at.signal, () => runPrompt(ctx, node, at));
  },

  retry: reflectOnFailure,

  reflectOnRequest,

  check: checkPrompt,

  redact(node, redactor) {
    const user = redactor.text(node.user);
    const data = redactor.value(node.data);
    return user === node.user && data === node.data ? node : { ...node, user, data };
  },
};

async function runPrompt(ctx: NodeContext, node: PromptNode, at: NodeAttempt): Promise<unknown> {
  const prepared = preparePrompt(ctx.view, ctx, node, ctx.reflections.revisedInputs(node, at.record));
  const { model, request } = prepared;
  // docs/design.md#events-spans-metrics-and-rewards: each prompt node is a handoff from the orchestrator, then the
  // agent's own span.
  ctx.journal.recordSpan({
    type: 'handoff_span',
    parentId: at.parentSpan,
    nodeId: at.record.id,
    fields: {
      from_agent: 'orchestrator',
      to_agent: agentNameOf(node),
      context_passed: { node: node.name, attempt: at.attempt },
      // Settled at submission (agent-resolution.ts): the registry version and the selection.
      ...(node.resolved?.version === undefined ? {} : { agent_version: node.resolved.version }),
      ...(node.resolved?.selection === undefined ? {} : { selection: node.resolved.selection }),
    },
  });
  const agentSpan = {
    type: 'agent_span' as const,
    parentId: at.parentSpan,
    nodeId: at.record.id,
    fields: {
      agent_name: agentNameOf(node),
      model: model.id,
      instructions_hash: request.system === undefined ? null : instructionsHash(request.system),
    },
  };
  const retrieval = node.retrieval;
  return ctx.journal.withSpan(agentSpan, (spanId) =>
    retrieval
      ? runRetrievalLoop(ctx, { ...node, retrieval }, at, prepared, spanId)
      : converse(ctx, node, at, prepared, spanId),
  );
}

/** Hashes by system text: the steps of a run (and runs of one definition) repeat the same few. */
const hashes = new LRUCache<string, string>({
  maxSize: 4 * 1024 * 1024,
  sizeCalculation: (_, text) => text.length || 1,
});

/** Identifies the instructions an agent ran with without storing them in every span. */
export function instructionsHash(system: string): string {
  let hash = hashes.get(system);
  if (hash === undefined) {
    hash = createHash('sha256').update(system).digest('hex').slice(0, 16);
    hashes.set(system, hash);
  }
  return hash;
}
