// baton web dashboard: plain ES module, no framework. Every piece of data is rendered with
// textContent / text nodes (the el() helper), never as HTML: model and user text stays inert.
import uPlot from '/dashboard/vendor/uPlot.esm.js';

const KEY_STORAGE = 'baton.apiKey';
const main = document.getElementById('main');
const keyForm = document.getElementById('key-form');
const keyInput = document.getElementById('key-input');
const keyMessage = document.getElementById('key-message');
const keyRemember = document.getElementById('key-remember');
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const STATUSES = ['idle', 'running', 'completed', 'failed', 'cancelled'];

/** Cleanups of the current page (timers, streams), run when the route changes. */
let cleanups = [];
const onLeave = (fn) => cleanups.push(fn);

/** An element with attributes and children; strings become text nodes (never parsed as HTML). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(
      typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
    );
  }
  return node;
}

class Unauthorized extends Error {}

// The key lives in this tab's sessionStorage (gone when the tab closes) unless the user asks to
// remember it on this device (localStorage, shared by every page of this origin, /docs included).
const storedKey = () => sessionStorage.getItem(KEY_STORAGE) ?? localStorage.getItem(KEY_STORAGE);

function authHeaders() {
  const key = storedKey();
  return key ? { authorization: `Bearer ${key}` } : {};
}

function askForKey(message) {
  keyForm.hidden = false;
  keyMessage.textContent = message ?? '';
  keyInput.focus();
}

async function api(path, options = {}) {
  const res = await fetch(path, { ...options, headers: { ...authHeaders(), ...(options.headers ?? {}) } });
  if (res.status === 401) {
    const body = await res.json().catch(() => ({}));
    askForKey(body.message ?? 'unauthorized');
    throw new Unauthorized(body.message ?? 'unauthorized');
  }
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(body?.message ?? `${res.status} ${res.statusText}`);
  return body;
}

keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const key = keyInput.value.trim();
  sessionStorage.removeItem(KEY_STORAGE);
  localStorage.removeItem(KEY_STORAGE);
  (keyRemember.checked ? localStorage : sessionStorage).setItem(KEY_STORAGE, key);
  keyInput.value = '';
  keyRemember.checked = false;
  keyForm.hidden = true;
  route();
});
document.getElementById('key-forget').addEventListener('click', () => {
  sessionStorage.removeItem(KEY_STORAGE);
  localStorage.removeItem(KEY_STORAGE);
  keyMessage.textContent = 'key forgotten';
});
document.getElementById('key-button').addEventListener('click', () => askForKey(''));

// ---------- formatting ----------
const pct = (v) => (v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)}%`);
const num = (v, digits = 2) => (v === null || v === undefined ? '—' : Number(v).toFixed(digits));
const usd = (v) => (v === null || v === undefined ? '—' : `$${Number(v).toFixed(6)}`);
const ms = (v) =>
  v === null || v === undefined ? '—' : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`;
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
const statusEl = (status) => el('span', { class: `status status-${status}`, 'data-status': status }, status);
const asText = (value) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));
/**
 * A client's or a model's text inside a line of the page's own text: <bdi> isolates its direction,
 * so a bidi override left open in it (U+202E…) cannot reverse the status or label beside it.
 */
const theirs = (text) => el('bdi', {}, text);

/**
 * How much of one text the page lays out: outputs may be megabytes (MAX_NODE_OUTPUT_BYTES) and a
 * provider's error or a tool's result as long, and laying out a megabyte freezes the page for
 * seconds. A box (an output, a generation's input) shows BLOCK_CHARS, a line (an event, an error,
 * a table cell) LINE_CHARS; the API has the rest.
 */
const BLOCK_CHARS = 100_000;
const LINE_CHARS = 4_000;
/** What is kept is isolated (theirs): an override left open where it was cut cannot reverse the note. */
function clip(text, limit) {
  if (text.length <= limit) return text;
  const rest = (text.length - limit).toLocaleString('en');
  return [theirs(text.slice(0, limit)), el('span', { class: 'clipped' }, ` … ${rest} more characters not shown`)];
}
const errorLine = (error) => el('div', { class: 'error' }, `${error.code}: `, theirs(clip(error.message, LINE_CHARS)));

function card(label, value, prev) {
  return el(
    'div',
    { class: 'card' },
    el('div', { class: 'label' }, label),
    el('div', { class: 'value', 'data-figure': label }, value),
    prev === undefined ? null : el('div', { class: 'prev' }, `previous: ${prev}`),
  );
}

/** Money saved: real money, with the simulated figure (not money) apart beneath it. */
function savedCard(label, real, simulated) {
  return el(
    'div',
    { class: 'card' },
    el('div', { class: 'label' }, label),
    el('div', { class: 'value', 'data-figure': label }, usd(real)),
    el('div', { class: 'prev' }, `simulated: ${usd(simulated)}`),
  );
}

function table(headers, rows) {
  return el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        headers.map((h) => el('th', {}, h)),
      ),
    ),
    el(
      'tbody',
      {},
      rows.length === 0
        ? el('tr', {}, el('td', { colspan: headers.length, class: 'muted' }, 'no data'))
        : rows.map((cells) =>
            el(
              'tr',
              {},
              cells.map((c) =>
                el(
                  'td',
                  { class: typeof c === 'number' ? 'num' : '' },
                  typeof c === 'string' ? clip(c, LINE_CHARS) : c,
                ),
              ),
            ),
          ),
    ),
  );
}

// ---------- summary ----------
const DAY_MS = 86_400_000;

/** Every efficiency record completed since `from` (pages of 100, at most 20 pages). */
async function efficiencyRecords(from) {
  const records = [];
  let cursor = null;
  for (let page = 0; page < 20; page += 1) {
    const q = new URLSearchParams({ from, limit: '100' });
    if (cursor) q.set('cursor', cursor);
    const body = await api(`/v1/metrics/efficiency?${q}`);
    records.push(...body.records);
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  return records;
}

/** Per UTC day: count, success rate, mean efficiency, cost (real and simulated), mean wall time. */
function perDay(records, fromMs, days) {
  const start = Math.floor(fromMs / DAY_MS) * DAY_MS;
  const buckets = Array.from({ length: days + 1 }, (_, i) => ({
    t: (start + i * DAY_MS) / 1000,
    n: 0,
    ok: 0,
    eff: 0,
    real: 0,
    sim: 0,
    wall: 0,
  }));
  for (const r of records) {
    const i = Math.floor((Date.parse(r.completed_at) - start) / DAY_MS);
    const b = buckets[i];
    if (!b) continue;
    b.n += 1;
    if (r.outcome === 'success') b.ok += 1;
    b.eff += r.efficiency_score ?? 0;
    b.wall += r.metrics.wall_time_seconds ?? 0;
    for (const m of Object.values(r.metrics.by_model ?? {})) {
      if (m.simulated) b.sim += m.cost_usd;
      else b.real += m.cost_usd;
    }
  }
  const avg = (b, v) => (b.n === 0 ? null : v / b.n);
  return {
    t: buckets.map((b) => b.t),
    count: buckets.map((b) => b.n),
    success: buckets.map((b) => avg(b, b.ok)),
    efficiency: buckets.map((b) => avg(b, b.eff)),
    real: buckets.map((b) => b.real),
    sim: buckets.map((b) => b.sim),
    wall: buckets.map((b) => avg(b, b.wall)),
  };
}

function chartBox(title, note) {
  const box = el('div', { class: 'chart', 'data-chart': title });
  return { box, wrap: el('div', {}, el('h2', {}, title), el('p', { class: 'note' }, note), box) };
}

function lineChart(box, title, x, series, yValues) {
  const width = Math.max(300, box.clientWidth - 16 || 520);
  const opts = {
    title,
    width,
    height: 220,
    scales: { x: { time: true } },
    series: [
      {},
      ...series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        points: { show: true, size: 6 },
        spanGaps: false,
        scale: s.scale ?? 'y',
      })),
    ],
    axes: [
      {},
      { scale: 'y', size: 84, ...(yValues ? { values: (_u, splits) => splits.map(yValues) } : {}) },
      ...(series.some((s) => s.scale === 'y2') ? [{ scale: 'y2', side: 1, grid: { show: false } }] : []),
    ],
  };
  const plot = new uPlot(opts, [x, ...series.map((s) => s.data)], box);
  onLeave(() => plot.destroy());
}

function barChart(box, title, labels, series) {
  const width = Math.max(300, box.clientWidth - 16 || 520);
  const x = labels.map((_, i) => i);
  const opts = {
    title,
    width,
    height: 220,
    scales: { x: { time: false, range: [-0.6, labels.length - 0.4] } },
    series: [
      {},
      ...series.map((s, i) => ({
        label: s.label,
        fill: s.color,
        stroke: s.color,
        paths: uPlot.paths.bars({ size: [0.35, 40], align: i === 0 ? -1 : 1 }),
        points: { show: false },
      })),
    ],
    axes: [{ splits: () => x, values: (_u, splits) => splits.map((i) => labels[i] ?? '') }, {}],
  };
  const plot = new uPlot(opts, [x, ...series.map((s) => s.data)], box);
  onLeave(() => plot.destroy());
}

async function summaryPage() {
  const days = 7;
  const d = await api(`/v1/dashboard?days=${days}`);
  const s = d.summary;
  const p = d.previous_summary;
  const [models, records] = await Promise.all([api('/v1/analytics/models'), efficiencyRecords(d.window.from)]);
  const series = perDay(records, Date.parse(d.window.from), days);

  const charts = el('div', { class: 'charts' });
  const trend = chartBox(
    'Success rate and efficiency per day',
    `Computed in the browser from the ${records.length} efficiency records of ${d.period} (GET /v1/metrics/efficiency); days without a finished workflow have no point.`,
  );
  const cost = chartBox(
    'Cost per day',
    'Σ cost of the day’s records by model; simulated cost (sim/* models) is not money and is drawn apart.',
  );
  const latency = chartBox('Latency by model', 'p50 and p95 of model calls (GET /v1/analytics/models, all time).');
  const window = chartBox(
    'This window vs the previous one',
    `${d.period}: ${when(d.window.from)} → ${when(d.window.to)}, previous from ${when(d.window.previous_from)}.`,
  );
  charts.append(trend.wrap, cost.wrap, latency.wrap, window.wrap);

  main.replaceChildren(
    el('h1', {}, `Summary (${d.period})`),
    el(
      'div',
      { class: 'cards' },
      card('Tasks completed', String(s.tasks_completed), String(p.tasks_completed)),
      card('Success rate', pct(s.success_rate), pct(p.success_rate)),
      card('Avg efficiency', num(s.avg_efficiency_score), num(p.avg_efficiency_score)),
      card('Cost (real)', usd(d.cost.real_usd), usd(d.previous_cost.real_usd)),
      card('Cost (simulated)', usd(d.cost.simulated_usd), usd(d.previous_cost.simulated_usd)),
      card('Cache hit rate', pct(d.cache.hit_rate)),
      savedCard('Saved by cache', d.cache.cost_saved_usd, d.cache.simulated_cost_saved_usd),
      savedCard('Saved by selection', d.selection_savings.saved_usd, d.selection_savings.simulated_saved_usd),
      card('Agents per task', num(s.avg_agents_per_task), num(p.avg_agents_per_task)),
      card('Tool reliability', pct(d.quality_pillars.tool_reliability_rate)),
    ),
    el('h2', {}, 'Trends'),
    table(
      ['figure', 'trend'],
      Object.entries(d.trends).map(([k, v]) => [k, v]),
    ),
    charts,
    el('h2', {}, 'Areas for improvement'),
    el(
      'ul',
      {},
      d.areas_for_improvement.length
        ? d.areas_for_improvement.map((a) => el('li', {}, clip(a, LINE_CHARS)))
        : el('li', { class: 'muted' }, 'none'),
    ),
    el('h2', {}, 'Top performing patterns'),
    el(
      'ul',
      {},
      d.top_performing_patterns.length
        ? d.top_performing_patterns.map((a) => el('li', {}, theirs(clip(a, LINE_CHARS))))
        : el('li', { class: 'muted' }, 'none'),
    ),
  );

  lineChart(trend.box, 'per day', series.t, [
    { label: 'success rate', color: '#1a7f37', data: series.success },
    { label: 'avg efficiency', color: '#2f6fdb', data: series.efficiency },
  ]);
  lineChart(
    cost.box,
    'USD per day',
    series.t,
    [
      { label: 'real USD', color: '#c62828', data: series.real },
      { label: 'simulated USD (not money)', color: '#999', data: series.sim },
    ],
    (v) => `$${v.toPrecision(2)}`,
  );
  const m = models.models ?? [];
  barChart(
    latency.box,
    'ms',
    m.map((x) => x.model),
    [
      { label: 'p50 ms', color: '#7b61c9', data: m.map((x) => x.latency_ms?.p50 ?? null) },
      { label: 'p95 ms', color: '#c9a227', data: m.map((x) => x.latency_ms?.p95 ?? null) },
    ],
  );
  barChart(
    window.box,
    'current vs previous',
    ['success rate', 'avg efficiency'],
    [
      { label: 'previous', color: '#b8c2d6', data: [p.success_rate, p.avg_efficiency_score] },
      { label: 'current', color: '#2f6fdb', data: [s.success_rate, s.avg_efficiency_score] },
    ],
  );
}

// ---------- workflow list ----------
async function workflowsPage(params) {
  const status = params.get('status') ?? '';
  const name = params.get('name') ?? '';
  const statusSelect = el(
    'select',
    { name: 'status' },
    el('option', { value: '' }, 'any status'),
    STATUSES.map((s) => el('option', { value: s, selected: s === status }, s)),
  );
  const nameInput = el('input', { name: 'name', placeholder: 'workflow name', value: name });
  const form = el(
    'form',
    {
      class: 'filters',
      onsubmit: (event) => {
        event.preventDefault();
        const q = new URLSearchParams();
        if (statusSelect.value) q.set('status', statusSelect.value);
        if (nameInput.value.trim()) q.set('name', nameInput.value.trim());
        location.hash = `#/workflows${q.size ? `?${q}` : ''}`;
      },
    },
    statusSelect,
    nameInput,
    el('button', { type: 'submit' }, 'Filter'),
    el('span', { class: 'note' }, 'refreshed every 2 s'),
  );
  const body = el('div', {});
  main.replaceChildren(el('h1', {}, 'Workflows'), form, body);

  const load = async () => {
    const q = new URLSearchParams({ limit: '50' });
    if (status) q.set('status', status);
    if (name) q.set('name', name);
    const page = await api(`/v1/workflows?${q}`);
    body.replaceChildren(
      table(
        ['workflow', 'status', 'created', 'duration', 'id'],
        page.items.map((w) => [
          el('a', { href: `#/workflows/${encodeURIComponent(w.id)}` }, theirs(w.name)),
          statusEl(w.status),
          when(w.createdAt),
          ms(w.durationMs),
          el('code', {}, w.id),
        ]),
      ),
    );
  };
  await load();
  const timer = setInterval(() => load().catch(() => {}), 2000);
  onLeave(() => clearInterval(timer));
}

// ---------- one workflow ----------
function treeList(node) {
  return el(
    'li',
    {},
    statusEl(node.status),
    ' ',
    theirs(node.name),
    ' ',
    el(
      'span',
      { class: 'muted' },
      `(${node.type}, ${ms(node.durationMs)}${node.attempts > 1 ? `, ${node.attempts} attempts` : ''})`,
    ),
    node.error ? errorLine(node.error) : null,
    node.children.length ? el('ul', { class: 'tree' }, node.children.map(treeList)) : null,
  );
}

function spanLabel(span) {
  switch (span.type) {
    case 'agent_span':
      return `agent ${span.agent_name}${span.model ? ` (${span.model})` : ''}`;
    case 'generation_span':
      return `generation ${span.model}`;
    case 'guardrail_span':
      return `guardrail ${span.guardrail_name}${span.triggered ? ' TRIGGERED' : ''}`;
    case 'handoff_span':
      return `handoff → ${span.to_agent}`;
    case 'function_span':
      return `tool ${span.name ?? span.function_name ?? ''}`;
    case 'custom_span':
      return `${span.operation_name} ${span.metadata?.node ?? ''}`;
    default:
      return span.type;
  }
}

/** Spans in tree order (parents before their children), each with its depth. */
function orderSpans(spans) {
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const kids = new Map();
  const roots = [];
  for (const s of spans) {
    if (s.parent_id && byId.has(s.parent_id)) kids.set(s.parent_id, [...(kids.get(s.parent_id) ?? []), s]);
    else roots.push(s);
  }
  const out = [];
  const visit = (s, depth) => {
    out.push({ span: s, depth });
    const children = (kids.get(s.span_id) ?? []).sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at));
    for (const c of children) visit(c, depth + 1);
  };
  for (const r of roots.sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at))) visit(r, 0);
  return out;
}

function waterfall(trace, onPick) {
  const now = Date.now();
  const start = Date.parse(trace.started_at);
  const endOf = (s) => (s.ended_at ? Date.parse(s.ended_at) : now);
  const end = Math.max(start + 1, ...trace.spans.map(endOf));
  const total = end - start;
  const rows = orderSpans(trace.spans).map(({ span, depth }) => {
    const s = Date.parse(span.started_at);
    const bar = el('div', {
      class: `span-bar t-${span.type}${span.cache_hit ? ' cache-hit' : ''} status-${span.status}`,
      'data-span-id': span.span_id,
      title: `${spanLabel(span).slice(0, LINE_CHARS)}: ${ms(endOf(span) - s)}`,
    });
    bar.style.left = `${((s - start) / total) * 100}%`;
    bar.style.width = `${Math.max(0.2, ((endOf(span) - s) / total) * 100)}%`;
    const meta = [ms(endOf(span) - s)];
    if (span.type === 'generation_span') {
      meta.push(`${span.tokens_in}→${span.tokens_out} tok`, `${usd(span.cost_usd)}${span.simulated ? ' sim' : ''}`);
      if (span.cache_hit) meta.push('cache hit');
    }
    const label = el('div', { class: 'wf-label' }, clip(spanLabel(span), LINE_CHARS));
    label.style.paddingLeft = `${depth * 12}px`;
    const clickable = span.type === 'generation_span';
    const row = el(
      'div',
      { class: `wf-row${clickable ? ' clickable' : ''}`, 'data-span-type': span.type },
      label,
      el('div', { class: 'wf-track' }, bar),
      el('div', { class: 'wf-meta' }, meta.join(' · ')),
    );
    if (clickable) {
      row.addEventListener('click', () => {
        for (const r of row.parentElement.querySelectorAll('.selected')) r.classList.remove('selected');
        row.classList.add('selected');
        onPick(span);
      });
    }
    return row;
  });
  return el(
    'div',
    {},
    el(
      'div',
      { class: 'legend' },
      [
        ['agent', '#7b61c9'],
        ['generation', '#2f6fdb'],
        ['cache hit', '#1a7f37'],
        ['guardrail', '#c9a227'],
        ['error', '#c62828'],
        ['other', '#8aa4d6'],
      ].map(([name, color]) => {
        const swatch = el('i', {});
        swatch.style.background = color;
        return el('span', {}, swatch, name);
      }),
      el('span', {}, `time axis: 0 → ${ms(total)} · click a generation for its input and output`),
    ),
    el('div', { class: 'waterfall', 'data-spans': trace.spans.length }, rows),
  );
}

/** Reads an SSE response body with fetch (EventSource cannot send the bearer token). */
async function readSse(res, onEvent, signal) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  while (!signal.aborted) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut = buffer.indexOf('\n\n');
    while (cut >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data) onEvent(JSON.parse(data));
      cut = buffer.indexOf('\n\n');
    }
  }
}

async function workflowPage(id) {
  let view = await api(`/v1/workflows/${encodeURIComponent(id)}`);
  const header = el('div', {});
  const treeBox = el('div', {});
  const outputBox = el('div', {});
  const eventsBox = el('div', { id: 'events' });
  const eventCount = el('span', { class: 'note' }, '0 events');
  const traceBox = el('div', {});
  const detail = el('div', { id: 'span-detail' });
  const prompts = new Map(); // nodeId → prompt texts in order (agentPromptStart)

  const cancelButton = el('button', { type: 'button', class: 'danger', id: 'cancel' }, 'Cancel');
  cancelButton.addEventListener('click', async () => {
    cancelButton.disabled = true;
    try {
      view = await api(`/v1/workflows/${encodeURIComponent(id)}/cancel`, { method: 'POST' });
      renderView();
    } catch (err) {
      header.append(el('div', { class: 'error' }, String(err.message)));
    }
  });

  // A critical workflow waits for a person (DESIGN §8): approve runs it, reject fails it with a reason.
  const approveButton = el('button', { type: 'button', id: 'approve' }, 'Approve');
  const rejectButton = el('button', { type: 'button', class: 'danger', id: 'reject' }, 'Reject');
  const reasonInput = el('input', { type: 'text', id: 'reject-reason', placeholder: 'reason for rejecting' });
  const decide = async (decision, body) => {
    approveButton.disabled = true;
    rejectButton.disabled = true;
    try {
      view = await api(`/v1/workflows/${encodeURIComponent(id)}/${decision}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      renderView();
    } catch (err) {
      header.append(el('div', { class: 'error' }, String(err.message)));
    }
  };
  approveButton.addEventListener('click', () => decide('approve', {}));
  rejectButton.addEventListener('click', () => {
    const reason = reasonInput.value.trim();
    if (reason === '') {
      reasonInput.focus();
      return;
    }
    decide('reject', { reason });
  });

  const renderView = () => {
    cancelButton.disabled = TERMINAL.has(view.status) || view.cancelRequested;
    const waiting = view.checkpoint?.state === 'pending' && !TERMINAL.has(view.status);
    approveButton.disabled = !waiting;
    rejectButton.disabled = !waiting;
    header.replaceChildren(
      ...[
        el('h1', {}, theirs(view.name), ' ', statusEl(view.status)),
        el(
          'div',
          { class: 'toolbar' },
          cancelButton,
          view.cancelRequested ? el('span', { class: 'muted' }, 'cancellation requested') : null,
          waiting ? el('span', { class: 'muted', id: 'checkpoint' }, 'waiting for approval (critical task)') : null,
          waiting ? approveButton : null,
          waiting ? reasonInput : null,
          waiting ? rejectButton : null,
          view.checkpoint && !waiting
            ? el(
                'span',
                { class: 'muted' },
                `checkpoint ${view.checkpoint.state}`,
                view.checkpoint.reason ? [': ', theirs(view.checkpoint.reason)] : null,
              )
            : null,
          el(
            'span',
            { class: 'muted' },
            `${view.id} · trace ${view.traceId} · ${ms(view.totals.durationMs)} · ${view.totals.providerCalls} provider calls · ${view.totals.tokensIn}→${view.totals.tokensOut} tokens · ${usd(view.totals.costUsd)} real, ${usd(view.totals.simulatedCostUsd)} simulated`,
          ),
        ),
        view.error ? errorLine(view.error) : null,
      ].filter(Boolean),
    );
    treeBox.replaceChildren(
      view.tree ? el('ul', { class: 'tree root' }, treeList(view.tree)) : el('p', { class: 'muted' }, 'no nodes yet'),
    );
    outputBox.replaceChildren(
      el(
        'pre',
        { id: 'output' },
        view.output === undefined || view.output === null ? '—' : clip(asText(view.output), BLOCK_CHARS),
      ),
    );
  };

  const pick = async (span) => {
    const inputs = prompts.get(span.node_id) ?? [];
    detail.replaceChildren(el('h2', {}, `Generation ${span.model}`), el('p', { class: 'muted' }, 'loading…'));
    let output = '(no cached response for this call)';
    if (span.cache_key) {
      try {
        const entry = await api(`/v1/cache/${encodeURIComponent(span.cache_key)}`);
        const content = entry.value?.response?.content ?? [];
        output = content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c, null, 2))).join('\n');
      } catch (err) {
        output = `(cache entry unavailable: ${err.message})`;
      }
    }
    detail.replaceChildren(
      el(
        'h2',
        {},
        `Generation ${span.model} · ${span.tokens_in}→${span.tokens_out} tokens · ${usd(span.cost_usd)}${span.cache_hit ? ' · cache hit' : ''}`,
      ),
      el('h3', {}, 'Input (the node’s prompts, from agentPromptStart events)'),
      el(
        'pre',
        { class: 'gen-input' },
        inputs.length ? clip(inputs.join('\n\n---\n\n'), BLOCK_CHARS) : '(not in the events read so far)',
      ),
      el('h3', {}, 'Output (the cached response)'),
      el('pre', { class: 'gen-output' }, clip(output, BLOCK_CHARS)),
    );
  };

  const loadTrace = async () => {
    const trace = await api(`/v1/traces/${encodeURIComponent(view.traceId)}`);
    traceBox.replaceChildren(waterfall(trace, pick));
  };

  main.replaceChildren(
    header,
    el(
      'div',
      { class: 'two-col' },
      el('div', {}, el('h2', {}, 'Tree'), treeBox, el('h2', {}, 'Output'), outputBox),
      el('div', {}, el('h2', {}, 'Events ', eventCount), eventsBox),
    ),
    el('h2', {}, 'Trace waterfall'),
    traceBox,
    detail,
  );
  renderView();
  await loadTrace();

  const controller = new AbortController();
  onLeave(() => controller.abort());
  let seen = 0;
  let refresh;
  const onEvent = (event) => {
    seen += 1;
    eventCount.textContent = `${seen} events${TERMINAL.has(view.status) ? '' : ' · live'}`;
    if (event.type === 'agentPromptStart' && typeof event.payload.prompt === 'string') {
      prompts.set(event.nodeId, [...(prompts.get(event.nodeId) ?? []), event.payload.prompt]);
    }
    eventsBox.append(
      el(
        'div',
        { class: 'event', 'data-type': event.type },
        el('span', { class: 'muted' }, `#${event.seq}`),
        el('strong', {}, event.type),
        el('span', { class: 'payload' }, clip(JSON.stringify(event.payload), LINE_CHARS)),
      ),
    );
    eventsBox.scrollTop = eventsBox.scrollHeight;
    clearTimeout(refresh);
    refresh = setTimeout(async () => {
      if (controller.signal.aborted) return;
      view = await api(`/v1/workflows/${encodeURIComponent(id)}`);
      renderView();
      await loadTrace();
    }, 150);
  };
  const res = await fetch(`/v1/workflows/${encodeURIComponent(id)}/events`, {
    headers: { ...authHeaders(), accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (!res.ok) throw new Error(`events: ${res.status}`);
  readSse(res, onEvent, controller.signal)
    .then(() => {
      eventCount.textContent = `${seen} events · stream closed`;
    })
    .catch(() => {});
}

// ---------- analytics ----------
async function analyticsPage() {
  const [tools, models, retrieval, selection] = await Promise.all([
    api('/v1/analytics/tools'),
    api('/v1/analytics/models'),
    api('/v1/analytics/retrieval'),
    api('/v1/analytics/selection'),
  ]);
  main.replaceChildren(
    el('h1', {}, 'Analytics'),
    el('h2', {}, 'Models'),
    table(
      [
        'model',
        'calls',
        'tokens in',
        'tokens out',
        'cost',
        'simulated cost',
        'p50',
        'p95',
        'call success',
        'tasks',
        'task success',
      ],
      (models.models ?? []).map((m) => [
        theirs(m.model),
        m.calls,
        m.tokens_in,
        m.tokens_out,
        usd(m.cost_usd),
        usd(m.simulated_cost_usd),
        ms(m.latency_ms?.p50),
        ms(m.latency_ms?.p95),
        pct(m.call_success_rate),
        m.tasks,
        pct(m.success_rate),
      ]),
    ),
    el('h2', {}, 'Tools'),
    table(
      ['tool', 'calls', 'success rate', 'avg latency', 'avg result quality', 'common patterns'],
      Object.entries(tools.by_tool ?? {}).map(([name, t]) => [
        theirs(clip(name, LINE_CHARS)),
        t.calls,
        pct(t.success_rate),
        ms(t.avg_latency_ms),
        num(t.avg_result_quality),
        theirs(clip((t.common_patterns ?? []).join(', '), LINE_CHARS)),
      ]),
    ),
    el(
      'ul',
      {},
      (tools.insights ?? []).map((i) =>
        el('li', {}, theirs(clip(typeof i === 'string' ? i : JSON.stringify(i), LINE_CHARS))),
      ),
    ),
    el('h2', {}, 'Retrieval'),
    table(
      [
        'model',
        'runs',
        'mean retrieval calls',
        'mean steps',
        'loop exhausted',
        'mean outcome reward',
        'guard interventions',
        'gap',
      ],
      (retrieval.models ?? []).map((m) => [
        theirs(m.model),
        m.runs,
        num(m.mean_retrieval_calls),
        num(m.mean_steps),
        pct(m.loop_exhausted_rate),
        num(m.mean_outcome_reward),
        m.guard_interventions,
        num(m.gap),
      ]),
    ),
    el('h2', {}, 'Agent selection strategies'),
    table(
      [
        'strategy',
        'runs',
        'mean aggregate reward',
        'success rate',
        'cost per success',
        'simulated cost per success',
        'saved',
        'simulated saved',
      ],
      (selection.strategies ?? []).map((x) => [
        x.strategy,
        x.runs,
        num(x.mean_aggregate_reward),
        pct(x.success_rate),
        usd(x.cost_per_success_usd),
        usd(x.simulated_cost_per_success_usd),
        usd(x.saved_usd),
        usd(x.simulated_saved_usd),
      ]),
    ),
    el('h2', {}, 'Saved by selection, per task type'),
    table(
      ['task type', 'strategy', 'runs', 'counted', 'saved', 'simulated saved'],
      (selection.savings ?? []).map((x) => [
        theirs(clip(x.task_type, LINE_CHARS)),
        x.strategy,
        x.runs,
        x.counted,
        usd(x.saved_usd),
        usd(x.simulated_saved_usd),
      ]),
    ),
  );
}

// ---------- router ----------
async function route() {
  for (const fn of cleanups) fn();
  cleanups = [];
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query = ''] = hash.split('?');
  const params = new URLSearchParams(query);
  main.replaceChildren(el('p', { class: 'muted' }, 'loading…'));
  try {
    const wf = /^\/workflows\/([^/]+)$/.exec(path);
    if (wf) await workflowPage(decodeURIComponent(wf[1]));
    else if (path === '/workflows') await workflowsPage(params);
    else if (path === '/analytics') await analyticsPage();
    else await summaryPage();
  } catch (err) {
    if (err instanceof Unauthorized)
      main.replaceChildren(el('p', { class: 'error' }, `Unauthorized: ${err.message}. Enter an API key above.`));
    else if (err.name !== 'AbortError') main.replaceChildren(el('p', { class: 'error' }, `Error: ${err.message}`));
  }
}

window.addEventListener('hashchange', route);
route();
