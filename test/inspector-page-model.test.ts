import { describe, expect, it } from 'vitest';
import type { LogEntry, RunSummary } from '../inspector/inspection-store.ts';
import { readEdits, refusedEditText } from '../inspector/page/edit-form.ts';
import { fitZoom, READABLE_PX, zoomAbout } from '../inspector/page/fit.ts';
import { entryOffset, entrySummary } from '../inspector/page/log-summary.ts';
import { outcomeBadge, outcomeMessage, outcomeWhere } from '../inspector/page/outcome-text.ts';
import { costText, durationText, runFacts, startText, tokensText } from '../inspector/page/run-facts.ts';
import {
  countText,
  emptyText,
  holdMark,
  listView,
  matchingRuns,
  newerTitle,
  runMatches,
} from '../inspector/page/run-filter.ts';
import { leafStates } from '../inspector/page/states.ts';
import {
  callOutcome,
  type TimelineItem,
  timelineCountText,
  timelineItems,
  travelledLog,
} from '../inspector/page/timeline-model.ts';
import {
  answerLines,
  messageLines,
  newMessages,
  type PlannerTurn,
  turnHeader,
} from '../inspector/page/turn-model.ts';

/**
 * The inspector page's pure modules (inspector/page/, issue 37 item 1), without a browser: the
 * runs list's filter and hold, the event log's summaries, the timeline built from a log, the
 * chart's fit, the edit form's reading and its refused-edit text, the outcome box's words.
 */

const run = (over: Partial<RunSummary>): RunSummary => ({
  key: over.runId ?? 'r',
  runId: 'r',
  source: 'native',
  machineId: 'run',
  status: 'running',
  startedAt: 0,
  updatedAt: 0,
  activeStates: [],
  lastTransition: null,
  logSize: 0,
  dropped: 0,
  ...over,
});
let seq = 0;
const entry = (type: string, data: unknown, at = 1_000): LogEntry => ({
  seq: ++seq,
  n: seq,
  at,
  kind: 'run_event',
  type,
  data,
});

describe('runs list filter and hold', () => {
  const runs = [
    run({
      runId: 'refund-7',
      agentId: 'support',
      status: 'awaiting',
      startedAt: 30,
      labels: { tenant: 'acme' },
    }),
    run({ runId: 'lookup-3', agentId: 'sales', status: 'completed', startedAt: 20 }),
    run({ runId: 'lookup-9', agentId: 'support', status: 'failed', startedAt: 40 }),
  ];

  it('matches text in the run id, agent and key=value labels, case-insensitively, and the status', () => {
    expect(runMatches(runs[0]!, { status: '', text: '  TENANT=acme ' })).toBe(true);
    expect(runMatches(runs[1]!, { status: '', text: 'sales' })).toBe(true);
    expect(runMatches(runs[1]!, { status: 'failed', text: 'sales' })).toBe(false);
    expect(matchingRuns(runs, { status: '', text: 'lookup' }).map((r) => r.runId)).toEqual([
      'lookup-9',
      'lookup-3',
    ]);
  });

  it('holds the runs started after the hold began, but for the one selected', () => {
    const filter = { status: '', text: '' };
    const mark = holdMark(runs.slice(0, 2), filter);
    expect(mark).toBe(30);
    const matching = matchingRuns(runs, filter);
    expect(listView(matching, mark, null)).toEqual({ shown: [runs[0], runs[1]], held: 1 });
    expect(listView(matching, mark, 'lookup-9').held).toBe(0);
    expect(listView(matching, null, null)).toEqual({ shown: matching, held: 0 });
    expect(holdMark([], filter)).toBe(0);
  });

  it('counts as the server does and names the held runs', () => {
    expect(countText({ total: 6, matched: 1, next: null }, true)).toBe('(1 of 6)');
    expect(countText({ total: 6, matched: 1, next: null }, false)).toBe('(6)');
    expect(newerTitle(1)).toBe('1 newer run, started while the pointer was on the list: show them');
    expect(newerTitle(3)).toMatch(/^3 newer runs,/);
    expect(emptyText({ total: 0, matched: 0, next: null })).toBe('No runs yet.');
    expect(emptyText({ total: 4, matched: 0, next: null })).toBe('No run matches.');
  });

  it('names the innermost active states without the machine prefix', () => {
    expect(leafStates(['run', 'run.awaiting', 'run.awaiting.confirmation'], 'run')).toBe(
      'awaiting.confirmation',
    );
    expect(leafStates(['run', 'run.a', 'run.b'], 'run')).toBe('a, b');
  });
});

describe('event log summaries', () => {
  it('summarises each run event type in one line, and truncates payloads of others', () => {
    expect(entrySummary(entry('state_changed', { previous: 'planning', state: 'validating' }))).toBe(
      'planning → validating',
    );
    expect(
      entrySummary(
        entry('tool_call_scheduled', { tool: 'crm.lookup', attempt: 2, edited: { by: 'inspector' } }),
      ),
    ).toBe('crm.lookup #2 · input edited by inspector');
    expect(
      entrySummary(
        entry('tool_result', {
          result: { toolCallId: 'c', name: 'crm.lookup', error: { message: 'bad email' } },
        }),
      ),
    ).toBe('crm.lookup ✗ bad email');
    expect(entrySummary(entry('tool_result', { result: { toolCallId: 'c', name: 'crm.lookup' } }))).toBe(
      'crm.lookup ✓',
    );
    expect(
      entrySummary(entry('run_forked', { runId: 'b', childRunId: 'b', parentRunId: 'a', atEvent: 4 })),
    ).toBe('from a at #4');
    expect(entrySummary(entry('policy_decision', { decision: { policy: 'caps', kinds: ['finish'] } }))).toBe(
      'caps: finish',
    );
    const long = entrySummary(entry('custom', { text: 'x'.repeat(500) }));
    expect(long).toHaveLength(141);
    expect(long.endsWith('…')).toBe(true);
    expect(entryOffset(entry('x', {}, 2_345), 1_000)).toBe('+1.345s');
  });
});

describe('timeline from a log', () => {
  it('turns scheduled calls and results into calls by turn, with awaits and policy decisions between', () => {
    const log = [
      entry(
        'tool_call_scheduled',
        { toolCallId: 'r:t1:c0', tool: 'crm.lookup', turnId: 'r:t1', attempt: 1 },
        100,
      ),
      entry(
        'tool_result',
        { result: { toolCallId: 'r:t1:c0', name: 'crm.lookup', output: { plan: 'pro' } } },
        130,
      ),
      entry(
        'tool_result',
        {
          result: {
            toolCallId: 'r:t2:c0',
            name: 'crm.upsert',
            error: { message: 'no' },
            retryHint: { reason: 'invalid_input' },
          },
        },
        150,
      ),
      entry('policy_decision', { decision: { policy: 'repeats', kinds: ['hint'] } }, 160),
      entry('await_clarification', { clarification: { id: 'q1', question: 'Which plan?' } }, 170),
    ];
    const items = timelineItems(log);
    const name = (item: TimelineItem) =>
      item.kind === 'call'
        ? `${item.turn} ${item.tool}`
        : item.kind === 'note'
          ? item.note
          : item.turn.turnId;
    expect(items.map(name)).toEqual([
      'r:t1 crm.lookup',
      'r:t2 crm.upsert',
      'policy repeats: hint',
      'awaits clarification',
    ]);
    const first = items[0]!;
    expect(first.kind === 'call' && first.end! - first.start).toBe(30);
    const second = items[1]!;
    expect(second.kind === 'call' && callOutcome(second.result)).toEqual({
      text: 'invalid_input',
      status: 'hint',
    });
    expect(callOutcome(undefined)).toEqual({ text: 'running', status: 'running' });
    expect(items[3]!.kind === 'note' && items[3]!.clarification?.question).toBe('Which plan?');
    expect(timelineCountText(2, 5, 0)).toBe('(2 calls)');
    expect(timelineCountText(2, 5, 40)).toBe('(2 calls in the newest 5 log entries)');
    expect(timelineCountText(0, 5, 0)).toBe('');
    // Time travel: as of the first result, one call.
    expect(timelineItems(travelledLog(log, log[1]!.seq))).toHaveLength(1);
    expect(travelledLog(log, null)).toBe(log);
  });
});

describe('chart fit', () => {
  it('fits the whole chart when its text stays readable, centred', () => {
    const zoom = fitZoom({ width: 1000, height: 800 }, { width: 500, height: 800 }, 12);
    expect(zoom).toEqual({ scale: 1, x: 250, y: 0, wider: false });
  });

  it('fits the width, from the top, when its text is readable so', () => {
    const zoom = fitZoom({ width: 1200, height: 400 }, { width: 1000, height: 1600 }, 12);
    expect(zoom).toEqual({ scale: 1.2, x: 0, y: 0, wider: false });
  });

  it('keeps text readable when the width would not: from the top left, and says it is wider than the window', () => {
    const zoom = fitZoom({ width: 600, height: 400 }, { width: 1000, height: 1600 }, 12);
    expect(zoom.scale).toBeCloseTo(READABLE_PX / 12, 6);
    expect({ x: zoom.x, y: zoom.y, wider: zoom.wider }).toEqual({ x: 0, y: 0, wider: true });
  });

  it('zooms about a point, within 0.1 and 4', () => {
    expect(zoomAbout({ scale: 1, x: 0, y: 0 }, 2, 100, 50)).toEqual({ scale: 2, x: -100, y: -50 });
    expect(zoomAbout({ scale: 3, x: 0, y: 0 }, 10, 0, 0).scale).toBe(4);
  });
});

describe('approve-with-edits form', () => {
  it('sends only the inputs changed, and names the first one that is not JSON', () => {
    const original = '{\n  "email": "a@b.c"\n}';
    expect(
      readEdits([
        { toolCallId: 'c0', value: original, original },
        { toolCallId: 'c1', value: '{"email":"x@y.z"}', original },
      ]),
    ).toEqual({ ok: true, edits: { c1: { email: 'x@y.z' } } });
    const bad = readEdits([{ toolCallId: 'c1', value: '{email', original }]);
    expect(bad.ok === false && bad.toolCallId).toBe('c1');
    expect(bad.ok === false && bad.problem).toMatch(/^not JSON: /);
  });

  it('shows a refused edit with its hint and one line per issue', () => {
    expect(
      refusedEditText({
        error: 'refused',
        toolCallId: 'c1',
        retryHint: {
          message: 'crm.delete_profile: the input does not fit',
          issues: [{ path: 'email', message: 'Invalid email address' }],
        },
      }),
    ).toBe('crm.delete_profile: the input does not fit\nemail: Invalid email address');
    // The tool boundary's message already names its issue: said once (issue 38).
    const message =
      'Argument validation failed for payments.refund: amountEur: Invalid input: expected number, received string';
    expect(
      refusedEditText({
        retryHint: {
          message,
          issues: [{ path: 'amountEur', message: 'Invalid input: expected number, received string' }],
        },
      }),
    ).toBe(message);
    expect(refusedEditText({ error: 'the run does not await this', retryHint: null })).toBe(
      'the run does not await this',
    );
  });
});

describe('outcome box', () => {
  it('says where a run failed and how a cap finalized it', () => {
    const failed = {
      kind: 'failed',
      message: '503',
      step: 'planning',
      turnId: 'r:t2',
      event: 'plan.error',
    } as const;
    expect(outcomeWhere(failed)).toBe('in planning, turn 2 (on plan.error)');
    expect(outcomeBadge(failed)).toBe('failed');
    expect(outcomeMessage({ kind: 'capped', message: 'maxToolCalls 10' })).toBe(
      'finalized early: maxToolCalls 10',
    );
    expect(outcomeBadge({ kind: 'capped', message: '' })).toBe('hint');
    expect(outcomeWhere({ kind: 'canceled', message: 'user' })).toBe('');
  });
});

describe('the model side of a run', () => {
  const turn = (over: Partial<PlannerTurn>): PlannerTurn => ({
    turnId: 'r:t2',
    kind: 'resume',
    messages: 4,
    ...over,
  });

  it('heads a turn with its latency and tokens, and lists what it answered', () => {
    expect(turnHeader(turn({ durationMs: 1234, usage: { inputTokens: 340, outputTokens: 25 } }))).toBe(
      'turn 2 · 1.2 s · 340 in / 25 out tok',
    );
    expect(turnHeader(turn({ durationMs: 42 }))).toBe('turn 2 · 42 ms');
    // A cost policy's spend for the turn (planner_turn.cost, issue 35 item 2), the turn's amount.
    expect(
      turnHeader(
        turn({
          durationMs: 42,
          usage: { inputTokens: 340, outputTokens: 25 },
          cost: { currency: 'USD', amount: 0.0012, spent: 0.0031, limit: 0.05 },
        }),
      ),
    ).toBe('turn 2 · 42 ms · 340 in / 25 out tok · $0.0012');
    expect(
      answerLines(
        turn({
          result: {
            finalResponse: { text: 'Ada is on pro.' },
            toolCalls: [{ name: 'crm.lookup', input: { email: 'ada@example.com' } }],
          },
        }),
      ),
    ).toEqual(['text: Ada is on pro.', '→ crm.lookup({"email":"ada@example.com"})']);
  });

  it('shows a failed turn with its cause chain (a provider error keeps its network reason)', () => {
    const failed = turn({
      error: {
        name: 'ModelUnavailableError',
        message: 'Planner failed: 503 from the provider',
        cause: { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:9', cause: undefined },
      },
    });
    expect(turnHeader(failed)).toBe('turn 2 · failed');
    expect(answerLines(failed)).toEqual([
      'ModelUnavailableError: Planner failed: 503 from the provider',
      'caused by Error: connect ECONNREFUSED 127.0.0.1:9',
    ]);
  });

  it('lists the messages a turn was sent that the turn before was not', () => {
    const transcript = [
      { role: 'user' as const, content: 'Ada?' },
      {
        role: 'assistant' as const,
        toolCalls: [{ toolCallId: 'r:t1:c1', toolName: 'crm.lookup', input: { email: 'ada@example.com' } }],
      },
      { role: 'tool' as const, toolCallId: 'r:t1:c1', toolName: 'crm.lookup', content: { plan: 'pro' } },
    ];
    const sent = newMessages(transcript, 1, turn({ messages: 3 }));
    expect(messageLines(sent)).toEqual([
      'assistant: → crm.lookup({"email":"ada@example.com"})',
      'tool crm.lookup: {"plan":"pro"}',
    ]);
    expect(messageLines(newMessages(transcript, 0, turn({ messages: 1 })))).toEqual(['user: Ada?']);
  });
});

describe('run facts in the list', () => {
  it('says when a run started, how long it took, its tokens and cost', () => {
    const now = new Date(2026, 11, 1, 21, 30).getTime();
    expect(startText(new Date(2026, 11, 1, 9, 5, 7).getTime(), now)).toBe('09:05:07');
    expect(startText(new Date(2026, 10, 28, 14, 3).getTime(), now)).toBe('Nov 28 14:03');
    expect([850, 3_240, 252_000, 3_780_000].map(durationText)).toEqual([
      '850 ms',
      '3.2 s',
      '4 min 12 s',
      '1 h 3 min',
    ]);
    expect(tokensText({ input: 1200, output: 34 })).toBe('1,234 tok');
    expect(costText({ amount: 0.0123, currency: 'USD' })).toBe('$0.0123');
    expect(costText({ amount: 2, currency: 'credits' })).toBe('2 credits');
    const startedAt = new Date(2026, 11, 1, 21, 0, 0).getTime();
    expect(
      runFacts(run({ startedAt, endedAt: startedAt + 3_240, tokens: { input: 700, output: 30 } }), now),
    ).toBe('21:00:00 · 3.2 s · 730 tok');
    expect(runFacts(run({ startedAt }), now)).toBe('21:00:00');
  });
});
