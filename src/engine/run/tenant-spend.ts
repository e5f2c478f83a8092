import { AppError } from '../../domain/errors.js';
import type { LlmRequest } from '../../domain/llm.js';
import type { Clock, WorkflowStore } from '../../domain/ports.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day of an epoch-ms instant, as the spend rows key it (migrations/sqlite/0018). */
export const utcDay = (ms: number): number => Math.floor(ms / DAY_MS);

/**
 * An upper bound on the input tokens of a request: its UTF-8 bytes (a token of the providers'
 * byte-level tokenizers covers at least one byte), plus room for the message framing. For English
 * text that is ~4× the real count; the reservation is settled with the real cost after the call.
 */
export function inputTokenBound(request: LlmRequest): number {
  const text = JSON.stringify([
    request.system ?? '',
    request.messages,
    request.tools ?? [],
    request.responseFormat ?? null,
  ]);
  return Buffer.byteLength(text) + 16 * (request.messages.length + 1);
}

interface TenantDay {
  day: number;
  /** Settled real cost of the day's calls (loaded from the store the first time the tenant is seen). */
  spentUsd: number;
  /** Worst cases of calls sent and not settled yet (whichever day they settle on). */
  reservedUsd: number;
  ready: Promise<void>;
}

/** One call's worst case, held against the budget until `settle`d with what it really cost (once). */
export interface SpendReservation {
  settle(realUsd: number): void;
}

/**
 * TENANT_DAILY_BUDGET_USD: what a tenant's provider calls may cost in real money per UTC
 * day (simulated `sim/*` cost is not money). Before a request is sent its worst case (price ×
 * (input bound + max_tokens)) is reserved; a request whose worst case the day's budget cannot pay —
 * spent + reserved + worst > budget — is refused with TENANT_BUDGET_EXCEEDED before it is sent.
 * Reserving the worst case is what keeps concurrent calls from overshooting together: the day's
 * real spend never passes the budget (given prices that match the provider's). After the call the
 * reservation is settled with its real cost. The process's memory is authoritative while it runs
 * (only it writes the spend rows); the stored day's spend is read when a tenant is first seen.
 */
export class TenantSpend {
  private readonly tenants = new Map<string, TenantDay>();

  constructor(
    /** Undefined: no money budget. */
    readonly budgetUsd: number | undefined,
    private readonly clock: Clock,
    private readonly store: Pick<WorkflowStore, 'tenantSpendUsd'>,
  ) {}

  async reserve(tenantId: string, worstUsd: number): Promise<SpendReservation | undefined> {
    const budget = this.budgetUsd;
    if (budget === undefined) return undefined;
    let tenant = this.tenants.get(tenantId);
    if (tenant === undefined) {
      const created: TenantDay = {
        day: utcDay(this.clock.now()),
        spentUsd: 0,
        reservedUsd: 0,
        ready: Promise.resolve(),
      };
      created.ready = this.store.tenantSpendUsd(tenantId, created.day).then((stored) => {
        if (created.day === utcDay(this.clock.now())) created.spentUsd += stored;
      });
      this.tenants.set(tenantId, created);
      tenant = created;
    }
    try {
      await tenant.ready;
    } catch (err) {
      // A failed read is tried again by the next call, not remembered as a spend of 0.
      if (this.tenants.get(tenantId) === tenant) this.tenants.delete(tenantId);
      throw err;
    }
    const day = this.rollOver(tenant);
    // No await from here on: the check and the reservation are one step.
    if (day.spentUsd >= budget || day.spentUsd + day.reservedUsd + worstUsd > budget) {
      throw new AppError(
        'TENANT_BUDGET_EXCEEDED',
        `the tenant's daily budget (TENANT_DAILY_BUDGET_USD ${budget} USD, UTC day) cannot pay for this call: ` +
          `${round(day.spentUsd)} USD spent today, ${round(day.reservedUsd)} USD held by calls in flight, ` +
          `this call could cost up to ${round(worstUsd)} USD`,
      );
    }
    day.reservedUsd += worstUsd;
    let open = true;
    return {
      settle: (realUsd) => {
        if (!open) return;
        open = false;
        const now = this.rollOver(day);
        now.reservedUsd = Math.max(0, now.reservedUsd - worstUsd);
        now.spentUsd += realUsd;
      },
    };
  }

  /** The tenant's entry for today: a new UTC day starts with nothing spent (reservations carry over). */
  private rollOver(tenant: TenantDay): TenantDay {
    const today = utcDay(this.clock.now());
    if (tenant.day !== today) {
      tenant.day = today;
      tenant.spentUsd = 0;
    }
    return tenant;
  }
}

function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
