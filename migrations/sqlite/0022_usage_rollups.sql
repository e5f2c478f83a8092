-- Roll-ups of the dashboard and model analytics (docs/analytics.md#dashboard-and-analytics, read by
-- src/store/usage-analytics.repo.ts): the sums those reports add up, per tenant and UTC hour
-- (grain 0) and UTC day (grain 1), so a 90-day window reads ~180 day rows and a few hour rows
-- instead of every record, span and event of the window. Raw rows still answer the partial hours
-- at a window's edges. Triggers keep them in the transaction of the rows they summarise (the
-- engine's commit of a workflow's final state, a feedback's reward update, a node's tool calls),
-- so a crash never leaves one without the other. They have no workflow_id: retention does not
-- sweep them (docs/operations.md#retention).
--
-- Latency percentiles come from a histogram whose bucket floors are powers of 1.1 (a duration d > 0
-- counts at 1.1^floor(log_1.1 d)), so a reported percentile is at most ~9% (1 − 1/1.1) below the
-- exact one; sums and counts are exact.

CREATE TABLE usage_rollup_grains (grain INTEGER PRIMARY KEY, ms INTEGER NOT NULL);
INSERT INTO usage_rollup_grains VALUES (0, 3600000), (1, 86400000);

-- GET /v1/dashboard's summary, pillars, cost and cache figures.
CREATE TABLE usage_rollup (
  tenant_id TEXT NOT NULL, grain INTEGER NOT NULL, period INTEGER NOT NULL,
  -- efficiency records, by created_at (the workflow's end)
  tasks NOT NULL DEFAULT 0, successes NOT NULL DEFAULT 0, efficiency_score NOT NULL DEFAULT 0,
  agents_spawned NOT NULL DEFAULT 0, total_agent_calls NOT NULL DEFAULT 0, wall_time_seconds NOT NULL DEFAULT 0,
  recovery_sum NOT NULL DEFAULT 0, recovery_count NOT NULL DEFAULT 0, goal_sum NOT NULL DEFAULT 0,
  goal_count NOT NULL DEFAULT 0, selection_sum NOT NULL DEFAULT 0, selection_count NOT NULL DEFAULT 0,
  gates_passed NOT NULL DEFAULT 0, gates_count NOT NULL DEFAULT 0, cost_usd NOT NULL DEFAULT 0,
  simulated_cost_usd NOT NULL DEFAULT 0,
  -- the guardrail spans and cache hits of those records' workflows
  guard_checks NOT NULL DEFAULT 0, guard_passed NOT NULL DEFAULT 0, cache_hits NOT NULL DEFAULT 0,
  cache_tokens NOT NULL DEFAULT 0, cache_cost_usd NOT NULL DEFAULT 0, cache_simulated_cost_usd NOT NULL DEFAULT 0,
  -- rewards by their created_at; tool calls and retrieval runs by when they happened
  rewards NOT NULL DEFAULT 0, outcome_reward NOT NULL DEFAULT 0, preference_sum NOT NULL DEFAULT 0,
  preference_count NOT NULL DEFAULT 0, tool_calls NOT NULL DEFAULT 0, tool_successes NOT NULL DEFAULT 0,
  judged_runs NOT NULL DEFAULT 0, relevant_runs NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, grain, period)
) WITHOUT ROWID;

-- The dashboard's task type × model groups (a record counts for every model it used).
CREATE TABLE usage_task_model_rollup (
  tenant_id TEXT NOT NULL, grain INTEGER NOT NULL, period INTEGER NOT NULL, task_type TEXT NOT NULL,
  model TEXT NOT NULL, tasks NOT NULL DEFAULT 0, successes NOT NULL DEFAULT 0, efficiency_score NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, grain, period, task_type, model)
) WITHOUT ROWID;

-- The dashboard's task type × complexity groups.
CREATE TABLE usage_task_complexity_rollup (
  tenant_id TEXT NOT NULL, grain INTEGER NOT NULL, period INTEGER NOT NULL, task_type TEXT NOT NULL,
  complexity TEXT NOT NULL, tasks NOT NULL DEFAULT 0, successes NOT NULL DEFAULT 0,
  efficiency_score NOT NULL DEFAULT 0, wall_time_seconds NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, grain, period, task_type, complexity)
) WITHOUT ROWID;

-- GET /v1/analytics/models: the records' by_model, their rewards, their agentPromptEnd events.
CREATE TABLE usage_model_rollup (
  tenant_id TEXT NOT NULL, grain INTEGER NOT NULL, period INTEGER NOT NULL, model TEXT NOT NULL,
  simulated NOT NULL DEFAULT 0, calls NOT NULL DEFAULT 0, tokens_in NOT NULL DEFAULT 0,
  tokens_out NOT NULL DEFAULT 0, cost_usd NOT NULL DEFAULT 0, tasks NOT NULL DEFAULT 0,
  successful_tasks NOT NULL DEFAULT 0, reward_sum NOT NULL DEFAULT 0, reward_count NOT NULL DEFAULT 0,
  ended NOT NULL DEFAULT 0, failed NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, grain, period, model)
) WITHOUT ROWID;

-- agentPromptEnd.duration histogram: calls per model and bucket floor (ms).
CREATE TABLE usage_latency_rollup (
  tenant_id TEXT NOT NULL, grain INTEGER NOT NULL, period INTEGER NOT NULL, model TEXT NOT NULL,
  floor_ms REAL NOT NULL, calls NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, grain, period, model, floor_ms)
) WITHOUT ROWID;

-- Inputs: inserting a row here adds it (sign 1) to the roll-ups or takes it back out (sign -1).
-- Each statement reads its JSON once and then joins the two grains (CROSS JOIN fixes that order;
-- LIMIT 1 keeps a subquery from being flattened into the join and evaluated once per grain): the
-- other way round every extraction ran twice.
-- Journal elements are read by path into the whole array (`NEW.events ->> ('$[' || ev.key || ']…')`),
-- not through json_each's `value`: SQLite parses the array once per statement and caches it, where
-- each `value` would be serialised and parsed again (a third faster over a 20-event row).
CREATE VIEW usage_journal_input (sign, tenant_id, ended_at, events, spans) AS
SELECT 0, '', 0, NULL, NULL WHERE 0;

CREATE TRIGGER usage_journal_input INSTEAD OF INSERT ON usage_journal_input BEGIN
  INSERT INTO usage_rollup (tenant_id, grain, period, guard_checks, guard_passed)
  SELECT NEW.tenant_id, g.grain, NEW.ended_at / g.ms, NEW.sign * x.checks, NEW.sign * x.passed
    FROM (SELECT count(*) AS checks, coalesce(sum(NEW.spans ->> ('$[' || s.key || '][8].triggered') = 0), 0) AS passed
            FROM json_each(NEW.spans) s
           WHERE instr(NEW.spans, '"guardrail_span"') > 0
             AND json_array_length(NEW.spans, '$[' || s.key || ']') = 9 AND NEW.spans ->> ('$[' || s.key || '][3]') = 'guardrail_span') x CROSS JOIN usage_rollup_grains g
   WHERE x.checks > 0
  ON CONFLICT DO UPDATE SET guard_checks = guard_checks + excluded.guard_checks,
    guard_passed = guard_passed + excluded.guard_passed;

  INSERT INTO usage_rollup (tenant_id, grain, period, cache_hits, cache_tokens, cache_cost_usd, cache_simulated_cost_usd)
  SELECT NEW.tenant_id, g.grain, NEW.ended_at / g.ms, NEW.sign * x.hits, NEW.sign * x.tokens, NEW.sign * x.cost,
         NEW.sign * x.simulated_cost
    FROM (SELECT count(*) AS hits,
                 coalesce(sum(coalesce(NEW.events ->> ('$[' || ev.key || '][4].tokenUsage.inputTokens'), 0)
                            + coalesce(NEW.events ->> ('$[' || ev.key || '][4].tokenUsage.outputTokens'), 0)), 0) AS tokens,
                 coalesce(sum(CASE WHEN NEW.events ->> ('$[' || ev.key || '][4].simulated') IS 1 THEN 0 ELSE NEW.events ->> ('$[' || ev.key || '][4].costSavedUsd') END), 0) AS cost,
                 coalesce(sum(CASE WHEN NEW.events ->> ('$[' || ev.key || '][4].simulated') IS 1 THEN NEW.events ->> ('$[' || ev.key || '][4].costSavedUsd') ELSE 0 END), 0)
                   AS simulated_cost
            FROM json_each(NEW.events) ev
           WHERE instr(NEW.events, '"cacheHit"') > 0 AND NEW.events ->> ('$[' || ev.key || '][3]') = 'cacheHit') x CROSS JOIN usage_rollup_grains g
   WHERE x.hits > 0
  ON CONFLICT DO UPDATE SET cache_hits = cache_hits + excluded.cache_hits,
    cache_tokens = cache_tokens + excluded.cache_tokens, cache_cost_usd = cache_cost_usd + excluded.cache_cost_usd,
    cache_simulated_cost_usd = cache_simulated_cost_usd + excluded.cache_simulated_cost_usd;

  INSERT INTO usage_model_rollup (tenant_id, grain, period, model, ended, failed)
  SELECT NEW.tenant_id, g.grain, NEW.ended_at / g.ms, x.model, NEW.sign * x.ended, NEW.sign * x.failed
    FROM (SELECT NEW.events ->> ('$[' || ev.key || '][4].model') AS model, count(*) AS ended,
                 sum((NEW.events -> ('$[' || ev.key || '][4].error')) IS NOT NULL) AS failed
            FROM json_each(NEW.events) ev
           WHERE instr(NEW.events, '"agentPromptEnd"') > 0 AND NEW.events ->> ('$[' || ev.key || '][3]') = 'agentPromptEnd' GROUP BY 1) x CROSS JOIN usage_rollup_grains g
   WHERE x.model IS NOT NULL
  ON CONFLICT DO UPDATE SET ended = ended + excluded.ended, failed = failed + excluded.failed;

  INSERT INTO usage_latency_rollup (tenant_id, grain, period, model, floor_ms, calls)
  SELECT NEW.tenant_id, g.grain, NEW.ended_at / g.ms, x.model, x.floor_ms, NEW.sign * x.calls
    FROM (SELECT model, CASE WHEN d > 0 THEN pow(1.1, floor(ln(d) / ln(1.1))) ELSE d END AS floor_ms, count(*) AS calls
            FROM (SELECT NEW.events ->> ('$[' || ev.key || '][4].model') AS model, NEW.events ->> ('$[' || ev.key || '][4].duration') AS d
                    FROM json_each(NEW.events) ev
                   WHERE instr(NEW.events, '"agentPromptEnd"') > 0 AND NEW.events ->> ('$[' || ev.key || '][3]') = 'agentPromptEnd')
           WHERE model IS NOT NULL AND typeof(d) IN ('integer', 'real') GROUP BY 1, 2) x CROSS JOIN usage_rollup_grains g
   WHERE true
  ON CONFLICT DO UPDATE SET calls = calls + excluded.calls;
END;

CREATE VIEW usage_efficiency_input (sign, workflow_id, tenant_id, task_type, complexity, outcome, created_at,
  record, efficiency_score, wall_time_seconds, cost_usd, simulated_cost_usd) AS
SELECT 0, '', '', '', '', '', 0, '', 0, 0, 0, 0 WHERE 0;

CREATE TRIGGER usage_efficiency_input INSTEAD OF INSERT ON usage_efficiency_input BEGIN
  INSERT INTO usage_rollup (tenant_id, grain, period, tasks, successes, efficiency_score, agents_spawned,
    total_agent_calls, wall_time_seconds, recovery_sum, recovery_count, goal_sum, goal_count, selection_sum,
    selection_count, gates_passed, gates_count, cost_usd, simulated_cost_usd)
  SELECT NEW.tenant_id, g.grain, NEW.created_at / g.ms, NEW.sign, NEW.sign * (NEW.outcome = 'success'),
         NEW.sign * NEW.efficiency_score, NEW.sign * coalesce(x.agents, 0), NEW.sign * coalesce(x.calls, 0),
         NEW.sign * NEW.wall_time_seconds, NEW.sign * coalesce(x.recovery, 0), NEW.sign * (x.recovery IS NOT NULL),
         NEW.sign * coalesce(x.goal, 0), NEW.sign * (x.goal IS NOT NULL), NEW.sign * coalesce(x.selection, 0),
         NEW.sign * (x.selection IS NOT NULL),
         NEW.sign * coalesce(x.reason IN ('tests_passed_first_try', 'tests_passed_after_fix', 'review_approved'), 0),
         NEW.sign * coalesce(x.reason IN ('tests_passed_first_try', 'tests_passed_after_fix', 'review_approved',
           'tests_partial_pass', 'review_concerns_minor', 'tests_failed', 'review_blocked'), 0),
         NEW.sign * NEW.cost_usd, NEW.sign * NEW.simulated_cost_usd
    FROM (SELECT NEW.record ->> '$.metrics.agents_spawned' AS agents, NEW.record ->> '$.metrics.total_agent_calls' AS calls,
                 NEW.record ->> '$.metrics.recovery_rate' AS recovery, NEW.record ->> '$.quality_pillars.goal_adherence' AS goal,
                 NEW.record ->> '$.quality_pillars.tool_selection_correct' AS selection,
                 NEW.record ->> '$.outcome_reason' AS reason LIMIT 1) x CROSS JOIN usage_rollup_grains g
   WHERE true
  ON CONFLICT DO UPDATE SET tasks = tasks + excluded.tasks, successes = successes + excluded.successes,
    efficiency_score = efficiency_score + excluded.efficiency_score, agents_spawned = agents_spawned + excluded.agents_spawned,
    total_agent_calls = total_agent_calls + excluded.total_agent_calls,
    wall_time_seconds = wall_time_seconds + excluded.wall_time_seconds, recovery_sum = recovery_sum + excluded.recovery_sum,
    recovery_count = recovery_count + excluded.recovery_count, goal_sum = goal_sum + excluded.goal_sum,
    goal_count = goal_count + excluded.goal_count, selection_sum = selection_sum + excluded.selection_sum,
    selection_count = selection_count + excluded.selection_count, gates_passed = gates_passed + excluded.gates_passed,
    gates_count = gates_count + excluded.gates_count, cost_usd = cost_usd + excluded.cost_usd,
    simulated_cost_usd = simulated_cost_usd + excluded.simulated_cost_usd;

  INSERT INTO usage_task_complexity_rollup (tenant_id, grain, period, task_type, complexity, tasks, successes,
    efficiency_score, wall_time_seconds)
  SELECT NEW.tenant_id, g.grain, NEW.created_at / g.ms, NEW.task_type, NEW.complexity, NEW.sign,
         NEW.sign * (NEW.outcome = 'success'), NEW.sign * NEW.efficiency_score, NEW.sign * NEW.wall_time_seconds
    FROM usage_rollup_grains g WHERE true
  ON CONFLICT DO UPDATE SET tasks = tasks + excluded.tasks, successes = successes + excluded.successes,
    efficiency_score = efficiency_score + excluded.efficiency_score,
    wall_time_seconds = wall_time_seconds + excluded.wall_time_seconds;

  INSERT INTO usage_task_model_rollup (tenant_id, grain, period, task_type, model, tasks, successes, efficiency_score)
  SELECT NEW.tenant_id, g.grain, NEW.created_at / g.ms, NEW.task_type, m.key, NEW.sign,
         NEW.sign * (NEW.outcome = 'success'), NEW.sign * NEW.efficiency_score
    FROM json_each(NEW.record, '$.metrics.by_model') m CROSS JOIN usage_rollup_grains g WHERE true
  ON CONFLICT DO UPDATE SET tasks = tasks + excluded.tasks, successes = successes + excluded.successes,
    efficiency_score = efficiency_score + excluded.efficiency_score;

  INSERT INTO usage_model_rollup (tenant_id, grain, period, model, simulated, calls, tokens_in, tokens_out, cost_usd,
    tasks, successful_tasks, reward_sum, reward_count)
  SELECT NEW.tenant_id, g.grain, NEW.created_at / g.ms, m.key, (m.key LIKE 'sim/%' OR m.value ->> '$.simulated' IS 1),
         NEW.sign * coalesce(m.value ->> '$.calls', 0), NEW.sign * coalesce(m.value ->> '$.tokens_in', 0),
         NEW.sign * coalesce(m.value ->> '$.tokens_out', 0), NEW.sign * coalesce(m.value ->> '$.cost_usd', 0),
         NEW.sign, NEW.sign * (NEW.outcome = 'success'),
         NEW.sign * coalesce((SELECT aggregate_reward FROM rewards WHERE workflow_id = NEW.workflow_id AND tenant_id = NEW.tenant_id), 0),
         NEW.sign * EXISTS (SELECT 1 FROM rewards WHERE workflow_id = NEW.workflow_id AND tenant_id = NEW.tenant_id)
    FROM json_each(NEW.record, '$.metrics.by_model') m CROSS JOIN usage_rollup_grains g WHERE true
  ON CONFLICT DO UPDATE SET simulated = max(simulated, excluded.simulated), calls = calls + excluded.calls,
    tokens_in = tokens_in + excluded.tokens_in, tokens_out = tokens_out + excluded.tokens_out,
    cost_usd = cost_usd + excluded.cost_usd, tasks = tasks + excluded.tasks,
    successful_tasks = successful_tasks + excluded.successful_tasks, reward_sum = reward_sum + excluded.reward_sum,
    reward_count = reward_count + excluded.reward_count;

  -- The journal rows the workflow wrote so far; later ones arrive through journal_usage_rollup.
  INSERT INTO usage_journal_input (sign, tenant_id, ended_at, events, spans)
  SELECT NEW.sign, NEW.tenant_id, NEW.created_at, events, spans FROM journal
   WHERE workflow_id = NEW.workflow_id AND tenant_id = NEW.tenant_id;
END;

CREATE VIEW usage_reward_input (sign, workflow_id, tenant_id, created_at, outcome_reward, preference_reward,
  aggregate_reward) AS
SELECT 0, '', '', 0, 0, NULL, 0 WHERE 0;

CREATE TRIGGER usage_reward_input INSTEAD OF INSERT ON usage_reward_input BEGIN
  INSERT INTO usage_rollup (tenant_id, grain, period, rewards, outcome_reward, preference_sum, preference_count)
  SELECT NEW.tenant_id, g.grain, NEW.created_at / g.ms, NEW.sign, NEW.sign * NEW.outcome_reward,
         NEW.sign * coalesce(NEW.preference_reward, 0), NEW.sign * (NEW.preference_reward IS NOT NULL)
    FROM usage_rollup_grains g WHERE true
  ON CONFLICT DO UPDATE SET rewards = rewards + excluded.rewards, outcome_reward = outcome_reward + excluded.outcome_reward,
    preference_sum = preference_sum + excluded.preference_sum,
    preference_count = preference_count + excluded.preference_count;

  -- GET /v1/analytics/models' mean aggregate reward, on the day of the record the reward belongs to.
  INSERT INTO usage_model_rollup (tenant_id, grain, period, model, reward_sum, reward_count)
  SELECT e.tenant_id, g.grain, e.created_at / g.ms, m.key, NEW.sign * NEW.aggregate_reward, NEW.sign
    FROM efficiency e CROSS JOIN json_each(e.record, '$.metrics.by_model') m CROSS JOIN usage_rollup_grains g
   WHERE e.workflow_id = NEW.workflow_id AND e.tenant_id = NEW.tenant_id
  ON CONFLICT DO UPDATE SET reward_sum = reward_sum + excluded.reward_sum,
    reward_count = reward_count + excluded.reward_count;
END;

CREATE TRIGGER efficiency_usage_rollup_insert AFTER INSERT ON efficiency BEGIN
  INSERT INTO usage_efficiency_input VALUES (1, NEW.workflow_id, NEW.tenant_id, NEW.task_type, NEW.complexity,
    NEW.outcome, NEW.created_at, NEW.record, NEW.efficiency_score, NEW.wall_time_seconds, NEW.cost_usd,
    NEW.simulated_cost_usd);
END;

CREATE TRIGGER efficiency_usage_rollup_update AFTER UPDATE ON efficiency BEGIN
  INSERT INTO usage_efficiency_input VALUES (-1, OLD.workflow_id, OLD.tenant_id, OLD.task_type, OLD.complexity,
    OLD.outcome, OLD.created_at, OLD.record, OLD.efficiency_score, OLD.wall_time_seconds, OLD.cost_usd,
    OLD.simulated_cost_usd);
  INSERT INTO usage_efficiency_input VALUES (1, NEW.workflow_id, NEW.tenant_id, NEW.task_type, NEW.complexity,
    NEW.outcome, NEW.created_at, NEW.record, NEW.efficiency_score, NEW.wall_time_seconds, NEW.cost_usd,
    NEW.simulated_cost_usd);
END;

-- The final commit writes the record before its journal row (store/workflows.repo.ts applyChanges).
CREATE TRIGGER journal_usage_rollup AFTER INSERT ON journal BEGIN
  INSERT INTO usage_journal_input (sign, tenant_id, ended_at, events, spans)
  SELECT 1, e.tenant_id, e.created_at, NEW.events, NEW.spans FROM efficiency e
   WHERE e.workflow_id = NEW.workflow_id AND e.tenant_id = NEW.tenant_id;
END;

CREATE TRIGGER rewards_usage_rollup_insert AFTER INSERT ON rewards BEGIN
  INSERT INTO usage_reward_input VALUES (1, NEW.workflow_id, NEW.tenant_id, NEW.created_at, NEW.outcome_reward,
    NEW.preference_reward, NEW.aggregate_reward);
END;

CREATE TRIGGER rewards_usage_rollup_update AFTER UPDATE ON rewards BEGIN
  INSERT INTO usage_reward_input VALUES (-1, OLD.workflow_id, OLD.tenant_id, OLD.created_at, OLD.outcome_reward,
    OLD.preference_reward, OLD.aggregate_reward);
  INSERT INTO usage_reward_input VALUES (1, NEW.workflow_id, NEW.tenant_id, NEW.created_at, NEW.outcome_reward,
    NEW.preference_reward, NEW.aggregate_reward);
END;

CREATE TRIGGER tool_calls_usage_rollup AFTER INSERT ON tool_calls BEGIN
  INSERT INTO usage_rollup (tenant_id, grain, period, tool_calls, tool_successes)
  SELECT NEW.tenant_id, g.grain, NEW.at / g.ms, 1, NEW.success FROM usage_rollup_grains g WHERE true
  ON CONFLICT DO UPDATE SET tool_calls = tool_calls + 1, tool_successes = tool_successes + excluded.tool_successes;
END;

CREATE TRIGGER retrieval_runs_usage_rollup AFTER INSERT ON retrieval_runs BEGIN
  INSERT INTO usage_rollup (tenant_id, grain, period, judged_runs, relevant_runs)
  SELECT NEW.tenant_id, g.grain, NEW.at / g.ms, NEW.relevant IS NOT NULL, coalesce(NEW.relevant, 0)
    FROM usage_rollup_grains g WHERE true
  ON CONFLICT DO UPDATE SET judged_runs = judged_runs + excluded.judged_runs,
    relevant_runs = relevant_runs + excluded.relevant_runs;
END;

-- Backfill: what the database holds so far. A record's input brings its journal rows and reward.
INSERT INTO usage_efficiency_input
SELECT 1, workflow_id, tenant_id, task_type, complexity, outcome, created_at, record, efficiency_score,
       wall_time_seconds, cost_usd, simulated_cost_usd
  FROM efficiency;

INSERT INTO usage_rollup (tenant_id, grain, period, rewards, outcome_reward, preference_sum, preference_count)
SELECT r.tenant_id, g.grain, r.created_at / g.ms, count(*), sum(r.outcome_reward), coalesce(sum(r.preference_reward), 0),
       count(r.preference_reward)
  FROM rewards r, usage_rollup_grains g WHERE true GROUP BY 1, 2, 3
ON CONFLICT DO UPDATE SET rewards = rewards + excluded.rewards, outcome_reward = outcome_reward + excluded.outcome_reward,
  preference_sum = preference_sum + excluded.preference_sum, preference_count = preference_count + excluded.preference_count;

INSERT INTO usage_rollup (tenant_id, grain, period, tool_calls, tool_successes)
SELECT c.tenant_id, g.grain, c.at / g.ms, count(*), sum(c.success)
  FROM tool_calls c, usage_rollup_grains g WHERE true GROUP BY 1, 2, 3
ON CONFLICT DO UPDATE SET tool_calls = tool_calls + excluded.tool_calls,
  tool_successes = tool_successes + excluded.tool_successes;

INSERT INTO usage_rollup (tenant_id, grain, period, judged_runs, relevant_runs)
SELECT r.tenant_id, g.grain, r.at / g.ms, count(r.relevant), coalesce(sum(r.relevant), 0)
  FROM retrieval_runs r, usage_rollup_grains g WHERE true GROUP BY 1, 2, 3
ON CONFLICT DO UPDATE SET judged_runs = judged_runs + excluded.judged_runs,
  relevant_runs = relevant_runs + excluded.relevant_runs;
