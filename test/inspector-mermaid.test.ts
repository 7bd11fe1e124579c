import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { toGraphModel } from '../machines/diagram/graph-model.ts';
import { edgeLabel, toMermaid } from '../machines/diagram/mermaid.ts';
import { runMachine } from '../machines/run-machine.ts';

describe('Mermaid stateDiagram-v2 of the run machine', () => {
  const graph = toGraphModel(runMachine);
  const text = toMermaid(graph);
  const lines = text.split('\n').map((line) => line.trim());

  it('starts with stateDiagram-v2 and marks the initial state and every final state', () => {
    expect(text.startsWith('stateDiagram-v2\n')).toBe(true);
    expect(lines).toContain('[*] --> planning');
    for (const final of ['completed', 'failed', 'canceled']) expect(lines).toContain(`${final} --> [*]`);
  });

  it('draws awaiting as a compound state with its own initial marker and path ids', () => {
    const start = lines.indexOf('state awaiting {');
    const end = lines.indexOf('}', start);
    expect(start).toBeGreaterThan(0);
    const block = lines.slice(start + 1, end);
    expect(block[0]).toBe('[*] --> awaiting_clarification');
    expect(block).toContain('state "clarification" as awaiting_clarification');
    expect(block).toContain('state "approved" as awaiting_approved');
  });

  it('writes every transition once per target, with its event and guard in the label', () => {
    const arrows = lines.filter((line) => / --> /.test(line) && !line.includes('[*]'));
    const expected = graph.edges.reduce((sum, edge) => sum + Math.max(1, edge.targets.length), 0);
    expect(arrows).toHaveLength(expected);
    expect(lines).toContain('planning --> awaiting_clarification : plan.done [planAwaitsClarification]');
    expect(lines).toContain(
      'awaiting_clarification --> resuming : provide.clarification [isClarificationAnswer]',
    );
    expect(lines).toContain('routing --> planning : always');
    expect(lines).toContain('executing --> executing : tool.done');
  });

  it('writes a transition that crosses a compound border at the top level, after the blocks', () => {
    const cross = lines.indexOf(
      'awaiting_clarification --> resuming : provide.clarification [isClarificationAnswer]',
    );
    const indented = text.split('\n')[cross]!;
    expect(indented.startsWith('  awaiting_clarification')).toBe(true);
    expect(cross).toBeGreaterThan(lines.indexOf('state awaiting {'));
    // Inside the block only transitions between awaiting's own children.
    expect(text).toMatch(/\n {4}awaiting_confirmation --> awaiting_approved : confirm \[isToolApproval\]\n/);
  });

  it('draws the root cancel transition from a dashed "any state" node', () => {
    expect(lines).toContain('state "any state" as run_any');
    expect(lines).toContain('run_any --> canceled : cancel');
    expect(lines).toContain('class run_any anyState');
  });

  it('keeps labels free of characters that end a Mermaid label', () => {
    expect(edgeLabel({ label: 'a:b;c#d', guard: 'g', actions: ['x'] } as never, true)).toBe('a.b cd [g] / x');
    for (const line of lines.filter((line) => line.includes(' : '))) {
      expect(line.split(' : ')[1]).not.toMatch(/[;:#]/);
    }
  });
});

describe('Mermaid of parallel and nested machines', () => {
  const machine = createMachine({
    id: 'media',
    initial: 'on',
    states: {
      on: {
        type: 'parallel',
        states: {
          audio: { initial: 'loud', states: { loud: { on: { MUTE: 'quiet' } }, quiet: {} } },
          video: { initial: 'hd', states: { hd: { on: { SLOW: 'sd' } }, sd: {} } },
        },
        on: { OFF: 'off' },
      },
      off: { type: 'final' },
    },
  });
  const text = toMermaid(toGraphModel(machine));

  it('separates parallel regions with -- and gives each region its initial marker', () => {
    expect(text).toContain(
      [
        '  state on {',
        '    state "audio" as on_audio',
        '    state on_audio {',
        '      [*] --> on_audio_loud',
        '      state "loud" as on_audio_loud',
        '      state "quiet" as on_audio_quiet',
        '      on_audio_loud --> on_audio_quiet : MUTE',
        '    }',
        '    --',
        '    state "video" as on_video',
        '    state on_video {',
      ].join('\n'),
    );
    expect(text).toContain('  on --> off : OFF\n');
    expect(text).toContain('  off --> [*]\n');
  });

  it('supports left-to-right direction', () => {
    expect(toMermaid(toGraphModel(machine), { direction: 'LR' }).split('\n')[1]).toBe('  direction LR');
  });
});
