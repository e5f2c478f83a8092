import {
  agentNamed,
  agentNameOf,
  mapPrompts,
  type PromptNode,
  type PromptSite,
  type WorkflowDefinition,
} from '../../domain/definition.js';
import type { UsageAnalyticsStore } from '../../domain/ports.js';
import { PATTERN_WINDOW_DAYS, topPerformingPatterns } from '../../metrics/patterns.js';

/**
 * loki-mode's ADAPT step, "store successful patterns" (docs/analytics.md#successful-patterns): a workflow
 * with `task.type` shows its planning prompts the tenant's top performing patterns of that task
 * type (metrics/patterns.ts). Settled at submission, after agent resolution (a prompt's role is
 * known then), into the prompt's `resolved.patterns`: the stored definition holds what the run
 * shows, so a resume after a crash sends the same request and the run itself reads nothing more.
 * `options.patterns: false` turns it off for a workflow; a child definition without the option
 * follows its parent.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** A planning prompt (its agent's own role, or the role it was selected for) whose workflow has patterns on. */
function shows(node: PromptNode, site: PromptSite): boolean {
  const on = site.options.reduce<boolean>((inherited, options) => options?.patterns ?? inherited, true);
  const role = agentNamed(site.agents, agentNameOf(node))?.role ?? node.resolved?.selection?.role;
  return on && role === 'planning';
}

export async function settlePlanningPatterns(
  tenantId: string,
  definition: WorkflowDefinition,
  deps: { usage: Pick<UsageAnalyticsStore, 'taskModels'>; now: number },
): Promise<WorkflowDefinition> {
  const taskType = definition.task?.type;
  if (taskType === undefined) return definition;
  const top = { path: 'root', agents: definition.agents, key: '', options: [definition.options] };
  let planning = 0;
  await mapPrompts(definition.root, top, async (node, site) => {
    if (shows(node, site)) planning += 1;
    return node;
  });
  // No prompt to show them to: no read.
  if (planning === 0) return definition;
  const to = deps.now + 1;
  const groups = await deps.usage.taskModels(tenantId, { from: to - PATTERN_WINDOW_DAYS * DAY_MS, to });
  const patterns = topPerformingPatterns(groups, taskType).map((p) => p.text);
  if (patterns.length === 0) return definition;
  const root = await mapPrompts(definition.root, top, async (node, site) =>
    shows(node, site) ? { ...node, resolved: { ...node.resolved, patterns } } : node,
  );
  return { ...definition, root };
}
