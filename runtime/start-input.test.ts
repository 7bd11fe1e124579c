import { describe, expect, it } from 'vitest';
import { noPolicies } from '../policies/policy-runner.ts';
import { DEFAULT_CAPS } from '../run/caps.ts';
import { startInputOf } from './start-input.ts';

const agent = { id: 'a', name: 'a' };
const messages = [{ role: 'user' as const, content: 'hi' }];

describe('startInputOf (runtime.start)', () => {
  it('clamps the caps a run asks for to the runtime ceilings, and keeps lower ones', () => {
    const ceilings = { ...DEFAULT_CAPS, maxToolCalls: 10, maxTotalTokens: 1_000 };
    const { input } = startInputOf(
      'r1',
      { messages, caps: { maxToolCalls: 99, maxRetriesPerTool: 1, maxTotalTokens: 5_000 } },
      { agent, ceilings, policies: noPolicies },
      () => {},
    );
    expect(input.caps).toEqual({
      ...ceilings,
      maxToolCalls: 10,
      maxRetriesPerTool: 1,
      maxTotalTokens: 1_000,
    });
  });

  it('hands the run info to onRunStart before the input reads its trace context (a plugin sets it)', () => {
    const { input } = startInputOf(
      'r2',
      { messages, labels: { team: 'x' } },
      { agent, ceilings: DEFAULT_CAPS, policies: noPolicies },
      (info) => {
        info.traceContext = { traceparent: '00-abc-def-01' };
      },
    );
    expect(input.traceContext).toEqual({ traceparent: '00-abc-def-01' });
    expect(input.labels).toEqual({ team: 'x' });
  });

  it('takes labels, caps and disabled tools from the start policies, with their decisions', () => {
    const decision = { policy: 'p', action: 'allow' } as never;
    const { input, decisions } = startInputOf(
      'r3',
      { messages, disabledTools: ['rm'] },
      {
        agent,
        ceilings: DEFAULT_CAPS,
        policies: {
          ...noPolicies,
          onRunStart: (start) => ({
            labels: { tier: 'free' },
            caps: { ...start.caps, maxToolCalls: 2 },
            disabledTools: { ...start.disabledTools, net: 'policy' },
            decisions: [decision],
          }),
        },
      },
      () => {},
    );
    expect(input.labels).toEqual({ tier: 'free' });
    expect(input.caps.maxToolCalls).toBe(2);
    expect(input.disabledTools).toEqual({ rm: 'app', net: 'policy' });
    expect(decisions).toEqual([decision]);
  });
});
