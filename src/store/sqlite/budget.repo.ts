import type { ChangeSet } from '../../domain/ports.js';
import type { Db } from './db.js';

/**
 * The money limits' rows (migrations/sqlite/0018): a tree's requests taken, on its root's row, and each
 * tenant's real spend per UTC day. Written inside the workflow store's commit.
 */
export interface BudgetRows {
  apply(changes: Pick<ChangeSet, 'requestsTaken' | 'tenantSpend'>): void;
  requestsTaken(rootWorkflowId: string): number;
  tenantSpendUsd(tenantId: string, day: number): number;
}

export function createBudgetRows(db: Db): BudgetRows {
  const addTaken = db.prepare<[number, string]>(
    'UPDATE workflows SET llm_requests_taken = llm_requests_taken + ? WHERE id = ?',
  );
  const selectTaken = db.prepare<[string], number>('SELECT llm_requests_taken FROM workflows WHERE id = ?').pluck();
  const addSpend = db.prepare<[string, number, number]>(
    `INSERT INTO tenant_spend_days (tenant_id, day, cost_usd) VALUES (?, ?, ?)
     ON CONFLICT (tenant_id, day) DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd`,
  );
  const selectSpend = db
    .prepare<[string, number], number>('SELECT cost_usd FROM tenant_spend_days WHERE tenant_id = ? AND day = ?')
    .pluck();
  return {
    apply({ requestsTaken, tenantSpend }) {
      if (requestsTaken) for (const t of requestsTaken) addTaken.run(t.count, t.rootWorkflowId);
      if (tenantSpend) for (const s of tenantSpend) addSpend.run(s.tenantId, s.day, s.costUsd);
    },
    requestsTaken: (rootWorkflowId) => selectTaken.get(rootWorkflowId) ?? 0,
    tenantSpendUsd: (tenantId, day) => selectSpend.get(tenantId, day) ?? 0,
  };
}
