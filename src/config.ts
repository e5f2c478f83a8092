import { z } from 'zod';

/** The whole environment, validated once at boot (docs/design.md#configuration). The table in docs/operations.md#configuration mirrors this file. */

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const ApiKeysSchema = z.string().transform((raw, ctx) => {
  const keys: Array<{ tenantId: string; key: string }> = [];
  for (const part of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = part.indexOf(':');
    const tenantId = part.slice(0, at);
    const key = part.slice(at + 1);
    if (at <= 0 || key.length < 16 || !/^[A-Za-z0-9_-]{1,64}$/.test(tenantId)) {
      ctx.addIssue({ code: 'custom', message: 'API_KEYS must be "tenant:key,…" with keys of 16+ characters' });
      return z.NEVER;
    }
    keys.push({ tenantId, key });
  }
  return keys;
});

/** A variable holding a JSON object, checked against `schema`; issues name the offending key. */
const jsonObject = <T extends z.ZodType<unknown, object>>(schema: T) =>
  z
    .string()
    .transform((raw, ctx) => {
      try {
        const value: unknown = JSON.parse(raw);
        if (value && typeof value === 'object' && !Array.isArray(value)) return value;
      } catch {}
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
      return z.NEVER;
    })
    .pipe(schema);

/**
 * `provider/model`: the non-tier branch of ModelSpecSchema (domain/definition.ts). config.ts and
 * domain/ share the ground floor and may not import each other (docs/design.md#architecture-and-floors), so the
 * pattern is
 * repeated here and test/unit/config.test.ts checks that both accept the same specs.
 */
const ModelIdSchema = z
  .string()
  .max(200)
  .regex(/^[a-z][a-z0-9-]*\/[A-Za-z0-9._:/-]+$/, { message: 'must be "<provider>/<model>"' });

const ModelTiersSchema = z.strictObject({
  haiku: ModelIdSchema.optional(),
  sonnet: ModelIdSchema.optional(),
  opus: ModelIdSchema.optional(),
});
export type ModelTiers = z.infer<typeof ModelTiersSchema>;

/** USD per million tokens (zod 4 numbers are finite); cache prices default to multiples of `input`. */
const PriceSchema = z.number().min(0);
const ModelPriceSchema = z.strictObject({
  input: PriceSchema,
  output: PriceSchema,
  cacheRead: PriceSchema.optional(),
  cacheWrite: PriceSchema.optional(),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;
const ModelPricesSchema = z.record(ModelIdSchema, ModelPriceSchema, {
  error: (issue) => (issue.code === 'invalid_key' ? 'is not a "<provider>/<model>" key' : undefined),
});

/**
 * Per-tenant defaults of cost-aware selection (docs/workflows.md#cost-aware-selection): keyed by
 * tenant id, `*` for every tenant without its own entry; a prompt's own values win. The bounds are
 * domain/agent-selection.ts's ToleranceSchema and ConfidenceSchema (the same floor: repeated here).
 */
const CostAwareDefaultsSchema = z.record(
  z.string().regex(/^(\*|[A-Za-z0-9_-]{1,64})$/, { message: 'must be a tenant id or "*"' }),
  z.strictObject({
    tolerance: z.number().min(0).max(1).optional(),
    confidence: z.number().min(0.5).max(0.999).optional(),
  }),
);

export const ConfigSchema = z
  .object({
    PORT: int(0, 65535).default(3000),
    HOST: z.string().min(1).optional(),
    DATABASE_PATH: z.string().min(1).default('./data/baton.db'),
    /** Set: the stores live in this PostgreSQL database instead of the SQLite file (docs/operations.md#postgresql). */
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\/\S+$/, { message: 'must be a postgres:// or postgresql:// URL' })
      .optional(),
    /** Connections one instance keeps to PostgreSQL. */
    DATABASE_POOL_SIZE: int(2, 1000).default(10),
    /** Over PostgreSQL: how long a run's lease lasts without a heartbeat (docs/operations.md#scale-out). */
    LEASE_MS: int(1000, 600_000).default(15_000),
    /** Over PostgreSQL: how often an instance renews all its leases; under LEASE_MS / 2. */
    LEASE_HEARTBEAT_MS: int(100, 300_000).default(4_000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    API_KEYS: ApiKeysSchema.default([]),
    METRICS_TOKEN: z.string().min(16, { message: 'must have 16+ characters' }).optional(),
    ANTHROPIC_API_KEY: z.string().min(1).optional(),
    ANTHROPIC_BASE_URL: z.url().optional(),
    OPENAI_BASE_URL: z.url().optional(),
    OPENAI_API_KEY: z.string().min(1).optional(),
    DEFAULT_MODEL: z.string().min(1).default('sonnet'),
    MODEL_TIERS: jsonObject(ModelTiersSchema).optional(),
    MODEL_PRICES: jsonObject(ModelPricesSchema).optional(),
    COST_AWARE_DEFAULTS: jsonObject(CostAwareDefaultsSchema).optional(),
    CONCURRENCY: int(1, 1024).default(16),
    MAX_RUNNING_WORKFLOWS: int(1, 100_000).default(1000),
    MAX_RUNNING_WORKFLOWS_PER_TENANT: int(1, 100_000).optional(),
    MAX_SSE_STREAMS_PER_TENANT: int(1, 100_000).default(100),
    SEARCH_WORKERS: int(1, 64).default(1),
    SEARCH_CONCURRENCY_PER_TENANT: int(1, 10_000).default(4),
    RETRY_MAX_ATTEMPTS: int(1, 10).default(4),
    RETRY_BASE_DELAY_MS: int(0, 60_000).default(1000),
    CACHE_MAX_ITEMS: int(1, 10_000_000).default(1000),
    CACHE_MAX_BYTES: int(1024, 64 * 1024 * 1024 * 1024).default(50 * 1024 * 1024),
    CACHE_TTL_MS: int(1000, 30 * 24 * 60 * 60 * 1000).default(60 * 60 * 1000),
    CACHE_PERSIST: bool.default(true),
    DB_SYNCHRONOUS: z.enum(['NORMAL', 'FULL']).default('NORMAL'),
    SHUTDOWN_GRACE_MS: int(0, 600_000).default(10_000),
    SSE_KEEPALIVE_MS: int(100, 600_000).default(15_000),
    RATE_LIMIT_PER_MINUTE: int(0, 10_000_000).default(6000),
    MAX_NODE_OUTPUT_BYTES: int(1024, 64 * 1024 * 1024).default(1024 * 1024),
    MAX_PROVIDER_RESPONSE_BYTES: int(64 * 1024, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
    MAX_LLM_CALLS_PER_WORKFLOW: int(1, 10_000).default(1000),
    TENANT_DAILY_BUDGET_USD: z.coerce.number().positive().max(1e9).optional(),
    MAX_TOOL_RESULT_BYTES: int(1024, 64 * 1024 * 1024).default(64 * 1024),
    MAX_CONVERSATION_BYTES: int(64 * 1024, 1024 * 1024 * 1024).default(1024 * 1024),
    BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024).default(1024 * 1024),
    REQUEST_TIMEOUT_MS: int(1000, 3_600_000).default(30_000),
    /** Unset: 20 s, or REQUEST_TIMEOUT_MS when shorter (see headersTimeoutMs). */
    HEADERS_TIMEOUT_MS: int(500, 3_600_000).optional(),
    /** Days a finished workflow tree is kept (fractions allowed, e.g. 0.01 ≈ 14 min for a soak); 0 keeps all. */
    RETENTION_DAYS: z.coerce.number().min(0).max(36_500).default(30),
  })
  .refine((c) => c.HEADERS_TIMEOUT_MS === undefined || c.HEADERS_TIMEOUT_MS <= c.REQUEST_TIMEOUT_MS, {
    // Node refuses a headers timeout longer than the whole-request timeout.
    path: ['HEADERS_TIMEOUT_MS'],
    message: 'must not exceed REQUEST_TIMEOUT_MS',
  })
  .refine((c) => c.LEASE_HEARTBEAT_MS * 2 < c.LEASE_MS, {
    // A heartbeat late once must still find its leases alive.
    path: ['LEASE_HEARTBEAT_MS'],
    message: 'must be under LEASE_MS / 2',
  });

export type Config = z.infer<typeof ConfigSchema>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return parsed.data;
}

/** How long a client may take to send its request headers (slow-header clients are cut then). */
export function headersTimeoutMs(config: Config): number {
  return config.HEADERS_TIMEOUT_MS ?? Math.min(config.REQUEST_TIMEOUT_MS, 20_000);
}

/**
 * Most places one tenant's workflows hold at once. Never above MAX_RUNNING_WORKFLOWS (a cap above
 * the global one let one tenant's backlog take every place); by default half of it when several
 * tenants are configured, so another tenant's work always finds places free, and all of it for a
 * single tenant, which has no one to leave room for.
 */
export function runningPerTenant(
  config: Pick<Config, 'MAX_RUNNING_WORKFLOWS' | 'MAX_RUNNING_WORKFLOWS_PER_TENANT' | 'API_KEYS'>,
): number {
  const global = config.MAX_RUNNING_WORKFLOWS;
  if (config.MAX_RUNNING_WORKFLOWS_PER_TENANT !== undefined)
    return Math.min(config.MAX_RUNNING_WORKFLOWS_PER_TENANT, global);
  const tenants = new Set(config.API_KEYS.map((k) => k.tenantId)).size;
  return tenants > 1 ? Math.max(1, Math.floor(global / 2)) : global;
}

/** Without API keys the service is single-tenant and only listens on loopback (docs/design.md#security). */
export const DEV_TENANT = 'default';
export function isDevMode(config: Config): boolean {
  return config.API_KEYS.length === 0;
}
export function listenHost(config: Config): string {
  if (isDevMode(config)) return '127.0.0.1';
  return config.HOST ?? '0.0.0.0';
}

/** Where the stores live, for the boot log: the SQLite path, or the PostgreSQL URL without its password. */
export function databaseLabel(config: Pick<Config, 'DATABASE_PATH' | 'DATABASE_URL'>): string {
  if (config.DATABASE_URL === undefined) return config.DATABASE_PATH;
  try {
    const url = new URL(config.DATABASE_URL);
    url.password = '';
    url.search = '';
    return url.toString();
  } catch {
    return 'postgres (unparsable URL)';
  }
}
