import { type AgentSelection, AUTO_WINDOW_USES, type SelectionStrategy } from '../../domain/agent-selection.js';
import type { AgentUse, RegisteredAgent } from '../../domain/agents.js';
import {
  type AgentConfig,
  agentNamed,
  mapPrompts,
  type PromptNode,
  somePrompt,
  type WorkflowDefinition,
} from '../../domain/definition.js';
import { ValidationError } from '../../domain/errors.js';
import type { AgentRegistry, RandomSource } from '../../domain/ports.js';
import type { Complexity } from '../../domain/task.js';
import { type AutoDecision, decideAutoStrategy } from '../../metrics/auto-strategy.js';
import { scoreCandidates } from '../../metrics/selection.js';
import type { Issue } from './rules.js';

/**
 * Registered agents and agent selection, settled at submission (docs/design.md#workflow-definitions,
 * docs/design.md#complexity-allocation-selection-and-review) before the
 * definition rules run, so that the stored definition holds exactly what the run uses — resumes and
 * old runs keep it whatever the registry says later:
 * - a prompt whose `agent` is not an agent of its scope (the definition's `agents`, a child's merged
 *   over its parent's) but a registered agent of the tenant: the agent's current config is copied
 *   into the root's `agents` and its version written to the prompt's `resolved.version`.
 *   Definition agents win over registered ones of the same name.
 * - a prompt whose `agent` is `{ select }`: the candidates (names resolved the same way, or every
 *   registered agent of the role) are scored by past reward on runs of the same task type and
 *   complexity (metrics/selection.ts); `agent` becomes the chosen name and `resolved.selection`
 *   records the strategy and every candidate's score (the prompt's handoff span shows them).
 *   `strategy: "auto"` resolves to greedy or thompson first (metrics/auto-strategy.ts), once per
 *   submission: the AgentUse row and `resolved.selection.strategy` hold what it resolved to (so
 *   its outcome counts for that strategy), `resolved.selection.auto` why.
 * Each such prompt yields an AgentUse row, the history later selections score by.
 */

export type PendingAgentUse = Omit<AgentUse, 'workflowId' | 'tenantId' | 'createdAt'>;

export interface AgentResolution {
  definition: WorkflowDefinition;
  uses: PendingAgentUse[];
}

interface Candidate {
  name: string;
  config: AgentConfig;
  /** null: an agent of the definition. */
  version: number | null;
}

export async function resolveAgents(
  tenantId: string,
  definition: WorkflowDefinition,
  /** The workflow's complexity (its routing, settled once for the submission): selection history is per complexity. */
  complexity: Complexity,
  deps: { agents: AgentRegistry; random: RandomSource },
): Promise<AgentResolution> {
  if (!needsResolution(definition)) return { definition, uses: [] };
  const issues: Issue[] = [];
  const uses: PendingAgentUse[] = [];
  const copied: Record<string, AgentConfig> = {};
  const lookups = new Map<string, RegisteredAgent | undefined>();
  const taskType = definition.task?.type ?? 'unspecified';

  let auto: Promise<AutoDecision> | undefined;
  const autoDecision = (): Promise<AutoDecision> => {
    auto ??= deps.agents
      .recentStrategySums(tenantId, taskType, AUTO_WINDOW_USES)
      .then((sums) => decideAutoStrategy(sums));
    return auto;
  };

  const registered = async (name: string): Promise<RegisteredAgent | undefined> => {
    if (!lookups.has(name)) lookups.set(name, await deps.agents.get(tenantId, name));
    return lookups.get(name);
  };
  const copy = (agent: RegisteredAgent): void => {
    copied[agent.name] = agent.config;
  };

  async function candidatesOf(
    select: AgentSelection['select'],
    scope: Readonly<Record<string, AgentConfig>>,
    path: string,
  ): Promise<Candidate[]> {
    const pool: Candidate[] = [];
    if (select.candidates === undefined) {
      for (const agent of await deps.agents.ofRole(tenantId, select.role)) {
        const own = agentNamed(scope, agent.name);
        if (own === undefined) pool.push({ name: agent.name, config: agent.config, version: agent.version });
        else if (own.role === undefined || own.role === select.role)
          pool.push({ name: agent.name, config: own, version: null });
      }
      if (pool.length === 0) {
        issues.push({ path: `${path}.role`, message: `you have no registered agent with role "${select.role}"` });
      }
      return pool;
    }
    for (const [i, name] of select.candidates.entries()) {
      const where = `${path}.candidates.${i}`;
      if (pool.some((c) => c.name === name)) {
        issues.push({ path: where, message: `"${name}" is listed twice` });
        continue;
      }
      const own = agentNamed(scope, name);
      const agent = own === undefined ? await registered(name) : undefined;
      const candidate: Candidate | undefined = own
        ? { name, config: own, version: null }
        : agent && { name, config: agent.config, version: agent.version };
      if (candidate === undefined) {
        issues.push({ path: where, message: `unknown agent "${name}": not in agents and not a registered agent` });
      } else if (candidate.config.role !== undefined && candidate.config.role !== select.role) {
        issues.push({ path: where, message: `"${name}" has role "${candidate.config.role}", not "${select.role}"` });
      } else pool.push(candidate);
    }
    return pool;
  }

  async function resolvePrompt(
    node: PromptNode,
    path: string,
    scope: Readonly<Record<string, AgentConfig>>,
    key: string,
  ): Promise<PromptNode> {
    if (node.resolved !== undefined) {
      issues.push({ path: `${path}.resolved`, message: 'is set by the service at submission; remove it' });
      return node;
    }
    const agent = node.agent;
    if (typeof agent === 'string') {
      if (agentNamed(scope, agent) !== undefined) return node;
      const found = await registered(agent);
      if (found === undefined) {
        issues.push({
          path: `${path}.agent`,
          message: `unknown agent "${agent}": not in agents and not a registered agent`,
        });
        return node;
      }
      copy(found);
      uses.push({
        node: key,
        agent,
        version: found.version,
        strategy: null,
        role: found.role,
        taskType,
        complexity,
        scores: null,
      });
      return { ...node, resolved: { version: found.version } };
    }
    const { select } = agent;
    const pool = await candidatesOf(select, scope, `${path}.agent.select`);
    if (pool.length === 0) return node;
    const requested = select.strategy ?? 'greedy';
    let decision: AutoDecision | undefined;
    let strategy: SelectionStrategy;
    if (requested === 'auto') {
      decision = await autoDecision();
      strategy = decision.strategy;
    } else strategy = requested;
    const names = pool.map((c) => c.name);
    const history = await deps.agents.rewardHistory(tenantId, names, taskType, complexity);
    const { chosen, scores } = scoreCandidates(names, history, strategy, deps.random);
    const pick = pool.find((c) => c.name === chosen) as Candidate;
    if (pick.version !== null)
      copy({ name: pick.name, version: pick.version, config: pick.config, role: null, createdAt: 0 });
    uses.push({
      node: key,
      agent: chosen,
      version: pick.version,
      strategy,
      role: select.role,
      taskType,
      complexity,
      scores: Object.fromEntries(scores.map((s) => [s.name, s.score])),
    });
    const candidates = scores.map((s, i) => ({
      agent: s.name,
      version: pool[i]?.version ?? null,
      runs: s.runs,
      meanReward: s.meanReward,
      score: s.score,
    }));
    return {
      ...node,
      agent: chosen,
      resolved: {
        ...(pick.version === null ? {} : { version: pick.version }),
        selection: {
          role: select.role,
          strategy,
          ...(decision === undefined ? {} : { auto: autoReport(decision) }),
          candidates,
          taskType,
          complexity,
        },
      },
    };
  }

  // In tree order, one prompt at a time: the random draws (and so a seeded test) are deterministic.
  const top = { path: 'root', agents: definition.agents, key: '', options: [definition.options] };
  const root = await mapPrompts(definition.root, top, (node, site) =>
    resolvePrompt(node, site.path, site.agents, site.key),
  );
  const first = issues[0];
  if (first) {
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    throw new ValidationError(`${first.path}: ${first.message}${more}`, issues);
  }
  return { definition: { ...definition, agents: { ...definition.agents, ...copied }, root }, uses };
}

function autoReport({ reason, minRuns, windowUses, figures }: AutoDecision) {
  return { reason, minRuns, windowUses, figures };
}

/** Whether any prompt selects, names an agent its scope lacks, or sends `resolved` (no store read otherwise). */
function needsResolution(definition: WorkflowDefinition): boolean {
  return somePrompt(
    definition.root,
    definition.agents,
    (node, agents) =>
      node.resolved !== undefined || typeof node.agent !== 'string' || agentNamed(agents, node.agent) === undefined,
  );
}
