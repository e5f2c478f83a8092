import { DEFAULTS, type WorkflowDefinition } from '../../domain/definition.js';
import type { RunningPlace } from '../../domain/ports.js';
import type { NodeRecord } from '../../domain/records.js';
import type { ReflectionEntry, ReflectionRequest } from '../../domain/reflection.js';
import { MISSING, type TemplateScope } from '../../domain/templates.js';
import type { AgentSlots, Limits, NodeContext, RunView } from '../node-context.js';
import { createChildLauncher } from './child-launcher.js';
import type { RunDeadlines } from './deadline.js';
import { RunJournal } from './journal.js';
import { RunModelGateway } from './model-gateway.js';
import { ReflectionLedger } from './reflection-ledger.js';
import { ownBudget, type RequestBudget } from './request-budget.js';
import { RunPlace } from './run-place.js';
import type { EngineServices } from './services.js';
import { SpawnedChildren } from './spawned-children.js';
import { RunToolBox } from './tool-box.js';
import { maxLlmCallsOf } from './tree-budgets.js';
import { RunTurnLog } from './turn-log.js';

/** The limits a run enforces: the definition's, under the service's caps. */
export function limitsOf(definition: WorkflowDefinition, services: EngineServices): Limits {
  return {
    ...DEFAULTS.limits,
    ...definition.options?.limits,
    maxLlmCalls: maxLlmCallsOf(definition, services.maxLlmCallsPerWorkflow),
    maxNodeOutputBytes: services.maxNodeOutputBytes,
    maxConversationBytes: services.maxConversationBytes,
  };
}

/** What templates read: the input, and the output of a step only once it completed. */
export function templateScopeOf(
  definition: WorkflowDefinition,
  byName: ReadonlyMap<string, NodeRecord>,
): TemplateScope {
  return {
    input: definition.input,
    stepOutput: (name) => {
      const node = byName.get(name);
      return node?.status === 'completed' ? node.output : MISSING;
    },
  };
}

/** What an execution starts from: the rows earlier executions committed (empty for a fresh run). */
export interface RunStart {
  nodes: readonly NodeRecord[];
  lastSeq: number;
  reflections?: readonly ReflectionEntry[] | undefined;
  /** Provider requests earlier executions sent: a resumed run keeps paying from the same budget. */
  requestsSent?: number | undefined;
  /** The request budget of the run's whole tree (its root's maxLlmCalls), which its own draws on. */
  treeBudget?: RequestBudget | undefined;
  /** The newest reflection asked for by hand: a non-terminal workflow with one was reopened for it. */
  reflectionRequest?: ReflectionRequest | undefined;
}

/** The run's own parts the context is built over. */
export interface RunParts {
  agents: AgentSlots;
  deadlines: RunDeadlines;
  signal: AbortSignal;
  place: RunningPlace | undefined;
  runNode: NodeContext['runNode'];
}

/** The run's collaborators, and the NodeContext the node kinds see them through. */
export interface RunWiring {
  context: NodeContext;
  journal: RunJournal;
  reflections: ReflectionLedger;
  turns: RunTurnLog;
  spawned: SpawnedChildren;
  place: RunPlace;
}

/** Builds the collaborators of one execution and the NodeContext (node-context.ts) over them. */
export function wireRun(
  view: RunView & { nodes: ReadonlyMap<string, NodeRecord> },
  start: RunStart,
  services: EngineServices,
  parts: RunParts,
): RunWiring {
  const { workflow } = view;
  const { lastSeq } = start;
  const journal = new RunJournal(workflow, lastSeq, services);
  const reflections = new ReflectionLedger(view, journal, () => services.clock.now(), start.reflections);
  const budget = ownBudget(start.requestsSent, view.limits.maxLlmCalls, start.treeBudget);
  const turns = new RunTurnLog(journal, services.store, workflow.id, lastSeq);
  const children = createChildLauncher(view, view.nodes, journal, turns, services);
  const spawned = new SpawnedChildren(children, parts.signal, services.onError);
  const place = new RunPlace(parts.place, parts.signal);
  const { tenantId } = workflow;
  const context: NodeContext = {
    view,
    journal,
    models: new RunModelGateway(journal, services, tenantId, budget),
    children,
    tools: new RunToolBox(journal, view, children, spawned, services),
    turns,
    retrieval: {
      corpus: (idOrName) => services.corpora.get(tenantId, idOrName),
      search: (corpusId, query, k) => services.corpora.search(tenantId, corpusId, query, k),
      engagement: (filter) => services.engagement.sums(tenantId, filter),
    },
    reflections,
    agents: parts.agents,
    clock: services.clock,
    deadlines: parts.deadlines,
    place,
    runNode: parts.runNode,
  };
  return { context, journal, reflections, turns, spawned, place };
}
