import {
  type AgentSelection,
  AUTO_WINDOW_USES,
  COST_AWARE_CONFIDENCE,
  COST_AWARE_MIN_RUNS,
  COST_AWARE_TOLERANCE,
  type ResolvedAgent,
  type SelectionStrategy,
} from '../../domain/agent-selection.js';
import type { AgentRunSums, AgentUse, RegisteredAgent } from '../../domain/agents.js';
import {
  type AgentConfig,
  type AgentNode,
  agentNamed,
  mapAgentNodes,
  roleOfAgentNode,
  someAgentNode,
  type WorkflowDefinition,
} from '../../domain/definition.js';
import { ValidationError } from '../../domain/errors.js';
import type { AgentRegistry, ModelCatalog, RandomSource } from '../../domain/ports.js';
import type { Complexity } from '../../domain/task.js';
import { type AutoDecision, decideAutoStrategy } from '../../metrics/auto-strategy.js';
import { type CostAwareSettings, decideCostAware, round8, selectionSavings } from '../../metrics/cost-aware.js';
import { scoreCandidates } from '../../metrics/selection.js';
import { tierFor } from '../../routing/allocation.js';
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
 *   `strategy: "auto"` resolves to a strategy first (metrics/auto-strategy.ts), once per
 *   submission: the AgentUse row and `resolved.selection.strategy` hold what it resolved to (so
 *   its outcome counts for that strategy), `resolved.selection.auto` why. `cost_aware`
 *   (metrics/cost-aware.ts) takes its tolerance and confidence from the prompt, else the tenant's
 *   default, else the built-in one. Every selection records its counterfactual savings against the
 *   best-quality candidate (docs/workflows.md#counterfactual-savings) on the row and in `resolved`.
 * - the same for a review node's reviewer agent (docs/design.md#review-nodes), whose selection is
 *   among reviewers (role `review`): reviewers are agents like any other.
 * Each such node yields an AgentUse row, the history later selections score by.
 */

/** Tolerance and confidence a tenant's cost_aware selections default to (COST_AWARE_DEFAULTS). */
export type CostAwareDefaults = (tenantId: string) => Partial<CostAwareSettings>;

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
  deps: {
    agents: AgentRegistry;
    random: RandomSource;
    models: Pick<ModelCatalog, 'resolve' | 'costUsd' | 'defaultModel'>;
    costAwareDefaults?: CostAwareDefaults | undefined;
  },
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

  async function resolveNode<N extends AgentNode>(
    node: N,
    path: string,
    scope: Readonly<Record<string, AgentConfig>>,
    key: string,
  ): Promise<N> {
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
        reference: null,
        savedUsd: null,
        savedSimulatedUsd: null,
      });
      return { ...node, resolved: { version: found.version } };
    }
    const { select } = agent;
    const role = roleOfAgentNode(node);
    if (role !== undefined && select.role !== role) {
      issues.push({ path: `${path}.agent.select.role`, message: `must be "${role}" for a ${node.type} node` });
      return node;
    }
    const pool = await candidatesOf(select, scope, `${path}.agent.select`);
    if (pool.length === 0) return node;
    const requested = select.strategy ?? 'greedy';
    if ((select.tolerance !== undefined || select.confidence !== undefined) && !takesSettings(requested)) {
      const field = select.tolerance === undefined ? 'confidence' : 'tolerance';
      issues.push({
        path: `${path}.agent.select.${field}`,
        message: `applies to strategy "cost_aware" (or "auto") only`,
      });
      return node;
    }
    let decision: AutoDecision | undefined;
    let strategy: SelectionStrategy;
    if (requested === 'auto') {
      decision = await autoDecision();
      strategy = decision.strategy;
    } else strategy = requested;
    const names = pool.map((c) => c.name);
    const history = await deps.agents.rewardHistory(tenantId, names, taskType, complexity);
    const scored =
      strategy === 'cost_aware'
        ? scoreCostAware(pool, history, settingsOf(select), select.role)
        : scoreByReward(pool, history, strategy);
    const { chosen } = scored;
    const pick = pool.find((c) => c.name === chosen) as Candidate;
    if (pick.version !== null)
      copy({ name: pick.name, version: pick.version, config: pick.config, role: null, createdAt: 0 });
    const savings = selectionSavings(names, history, chosen);
    uses.push({
      node: key,
      agent: chosen,
      version: pick.version,
      strategy,
      role: select.role,
      taskType,
      complexity,
      scores: Object.fromEntries(scored.candidates.map((s) => [s.agent, s.score])),
      ...savings,
    });
    return {
      ...node,
      agent: chosen,
      resolved: {
        ...(pick.version === null ? {} : { version: pick.version }),
        selection: {
          role: select.role,
          strategy,
          ...(decision === undefined ? {} : { auto: autoReport(decision) }),
          ...(scored.costAware === undefined ? {} : { costAware: scored.costAware }),
          candidates: scored.candidates,
          taskType,
          complexity,
          savings,
        },
      },
    };
  }

  type Selection = NonNullable<ResolvedAgent['selection']>;
  interface Scored {
    chosen: string;
    candidates: Selection['candidates'];
    costAware?: Selection['costAware'];
  }

  /** What every strategy's candidates show beside their score: successes and expected cost per run. */
  const record = (c: Candidate, sums: AgentRunSums | undefined) => ({
    agent: c.name,
    version: c.version,
    runs: sums?.runs ?? 0,
    meanReward: sums && sums.runs > 0 ? round4(sums.rewardSum / sums.runs) : null,
    successes: sums?.successes ?? 0,
    expectedCostUsd: sums && sums.runs > 0 ? round8(sums.costUsd / sums.runs) : null,
    expectedSimulatedCostUsd: sums && sums.runs > 0 ? round8(sums.simulatedCostUsd / sums.runs) : null,
  });

  function scoreByReward(
    pool: readonly Candidate[],
    history: ReadonlyMap<string, AgentRunSums>,
    strategy: Exclude<SelectionStrategy, 'cost_aware'>,
  ): Scored {
    const names = pool.map((c) => c.name);
    const { chosen, scores } = scoreCandidates(names, history, strategy, deps.random);
    const candidates = pool.map((c, i) => ({ ...record(c, history.get(c.name)), score: scores[i]?.score ?? 0 }));
    return { chosen, candidates };
  }

  function scoreCostAware(
    pool: readonly Candidate[],
    history: ReadonlyMap<string, AgentRunSums>,
    settings: CostAwareSettings,
    role: AgentSelection['select']['role'],
  ): Scored {
    const inputs = pool.map((c) => ({ name: c.name, history: history.get(c.name), listPrice: listPrice(c, role) }));
    const decision = decideCostAware(inputs, settings, deps.random);
    const candidates = pool.map((c, i) => {
      const d = decision.candidates[i];
      return {
        ...record(c, history.get(c.name)),
        score: round4(d?.draw ?? 0),
        belowLeader: d?.belowLeader == null ? null : round4(d.belowLeader),
        eligible: d?.eligible ?? false,
      };
    });
    const costAware = { ...settings, minRuns: COST_AWARE_MIN_RUNS, leader: decision.leader, reason: decision.reason };
    return { chosen: decision.chosen, candidates, costAware };
  }

  /** USD for a million input and a million output tokens of the model the candidate runs; null: unresolvable. */
  function listPrice(c: Candidate, role: AgentSelection['select']['role']): number | null {
    const spec = c.config.model === 'auto' ? tierFor(c.config.role ?? role, complexity) : c.config.model;
    try {
      const model = deps.models.resolve(spec ?? deps.models.defaultModel);
      return deps.models.costUsd(model.id, { inputTokens: 1_000_000, outputTokens: 1_000_000 });
    } catch {
      // The definition rules report an unknown model; the warm-up only loses its price order.
      return null;
    }
  }

  function settingsOf(select: AgentSelection['select']): CostAwareSettings {
    const tenant = deps.costAwareDefaults?.(tenantId) ?? {};
    return {
      tolerance: select.tolerance ?? tenant.tolerance ?? COST_AWARE_TOLERANCE,
      confidence: select.confidence ?? tenant.confidence ?? COST_AWARE_CONFIDENCE,
    };
  }

  // In tree order, one prompt at a time: the random draws (and so a seeded test) are deterministic.
  const top = { path: 'root', agents: definition.agents, key: '', options: [definition.options] };
  const root = await mapAgentNodes(definition.root, top, (node, site) =>
    resolveNode(node, site.path, site.agents, site.key),
  );
  const first = issues[0];
  if (first) {
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    throw new ValidationError(`${first.path}: ${first.message}${more}`, issues);
  }
  return { definition: { ...definition, agents: { ...definition.agents, ...copied }, root }, uses };
}

const round4 = (value: number): number => Math.round(value * 10_000) / 10_000;

/** Tolerance and confidence are cost_aware's; `auto` may resolve to it. */
function takesSettings(requested: NonNullable<AgentSelection['select']['strategy']>): boolean {
  return requested === 'cost_aware' || requested === 'auto';
}

function autoReport({ reason, minRuns, windowUses, figures }: AutoDecision) {
  return { reason, minRuns, windowUses, figures };
}

/** Whether any agent node selects, names an agent its scope lacks, or sends `resolved` (no store read otherwise). */
function needsResolution(definition: WorkflowDefinition): boolean {
  return someAgentNode(
    definition.root,
    definition.agents,
    (node, agents) =>
      node.resolved !== undefined || typeof node.agent !== 'string' || agentNamed(agents, node.agent) === undefined,
  );
}
