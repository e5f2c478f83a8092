import { type AppError, fromErrorInfo } from '../../domain/errors.js';
import type { NodeRecord } from '../../domain/records.js';
import type { ReflectionEntry, ReflectionRequest } from '../../domain/reflection.js';

/**
 * A failed workflow reopened for a reflection asked for by hand (docs/workflows.md#reflection). Only the
 * requested node and the containers above it run again; every other failure recorded before the
 * request stands (no free attempt), and the workflow's deadline runs from the request. The state
 * comes from stored rows alone, so an execution resumed after a crash decides the same way.
 */
export class Reopening {
  /** The requested node and its ancestors: the records that run again although they failed. */
  private readonly path = new Set<string>();
  private pending: boolean;

  constructor(
    readonly request: ReflectionRequest,
    nodes: ReadonlyMap<string, NodeRecord>,
    history: readonly ReflectionEntry[],
  ) {
    // Stryker disable next-line OptionalChaining: the requested node and its containers always have rows (the request was checked against them)
    for (let id: string | null = request.nodeId; id !== null; id = nodes.get(id)?.parentId ?? null) {
      this.path.add(id);
    }
    // Reflected already when an entry of that node was recorded since the request (a resumed execution).
    this.pending = !history.some((entry) => entry.nodeId === request.nodeId && entry.timestamp >= request.requestedAt);
  }

  /** The failure a record made before the request, raised again; undefined when the record runs. */
  finalFailure(record: NodeRecord): AppError | undefined {
    if (record.status !== 'failed' || this.path.has(record.id)) return undefined;
    if ((record.endedAt ?? 0) > this.request.requestedAt) return undefined;
    return record.error === null ? undefined : fromErrorInfo(record.error);
  }

  /** True once, for the requested node, while its reflection has not been made. */
  take(record: NodeRecord): boolean {
    if (!this.pending || record.id !== this.request.nodeId) return false;
    this.pending = false;
    return true;
  }
}
