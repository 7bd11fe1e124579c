import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INSPECT_HELP, inspectCommand } from '../inspector/inspect-command.ts';
import { DiagramFormatError, diagramCommand } from '../machines/diagram/diagram-command.ts';
import { toGraphModel } from '../machines/diagram/graph-model.ts';

describe('diagramCommand (toolwarden diagram)', () => {
  it('returns Mermaid by default and the graph model as JSON', async () => {
    expect((await diagramCommand()).text.startsWith('stateDiagram-v2\n')).toBe(true);
    const json = await diagramCommand({ format: 'json' });
    expect(JSON.parse(json.text)).toEqual(toGraphModel());
  });

  it('writes --out FILE', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-diagram-'));
    const out = join(dir, 'run.svg');
    const result = await diagramCommand({ format: 'svg', out });
    expect(result.out).toBe(out);
    const svg = await readFile(out, 'utf8');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('data-state-id="run.awaiting.clarification"');
  });

  it('rejects an unknown format, naming the known ones', async () => {
    await expect(diagramCommand({ format: 'png' })).rejects.toThrow(DiagramFormatError);
    await expect(diagramCommand({ format: 'png' })).rejects.toThrow('mermaid, svg, json');
  });
});

describe('inspectCommand (toolwarden inspect)', () => {
  it('serves the page and runs the demo agent through a clarification to completion', async () => {
    const lines: string[] = [];
    const session = await inspectCommand({
      answerAfterMs: 30,
      turnMs: 5,
      everyMs: 60_000,
      print: (line) => lines.push(line),
    });
    try {
      expect(lines[0]).toBe(`toolwarden inspector: ${session.url}`);
      expect(lines.join('\n')).toContain(session.wsUrl);
      const store = session.inspector.store;
      const end = Date.now() + 5000;
      while (store.runs()[0]?.status !== 'completed' && Date.now() < end)
        await new Promise((r) => setTimeout(r, 10));
      const [run] = store.runs();
      expect(run?.status).toBe('completed');
      const types = store.log(run!.key).map((entry) => entry.type);
      expect(types).toContain('await_clarification');
      expect(types).toContain('tool_result');
      expect((await fetch(session.url)).status).toBe(200);
    } finally {
      await session.close();
    }
    expect(INSPECT_HELP).toContain('demo agent');
  });
});
