import { describe, expect, it } from 'vitest';
import { layoutGraph } from '../machines/diagram/elk-layout.ts';
import { toGraphModel } from '../machines/diagram/graph-model.ts';
import { renderSvg, toSvg } from '../machines/diagram/svg.ts';
import { runMachine } from '../machines/run-machine.ts';

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('SVG of the run machine (ELK layout)', async () => {
  const graph = toGraphModel(runMachine);
  const layout = await layoutGraph(graph);
  const svg = renderSvg(graph, layout);

  it('has every state id exactly once as a data-state-id group', () => {
    const ids = [...svg.matchAll(/<g data-state-id="([^"]+)"/g)].map((match) => match[1]);
    expect(ids.sort()).toEqual(graph.states.map((state) => state.id).sort());
    for (const state of graph.states) expect(count(svg, `data-state-id="${state.id}"`)).toBe(1);
  });

  it('has every edge id exactly once as a data-edge-id group, with a path per target', () => {
    const ids = [...svg.matchAll(/<g data-edge-id="([^"]+)"/g)].map((match) => match[1]);
    expect(ids.sort()).toEqual(graph.edges.map((edge) => edge.id).sort());
    for (const edge of graph.edges) expect(count(svg, `data-edge-id="${edge.id}"`)).toBe(1);
    for (const route of layout.edges) {
      const edge = graph.edges.find((candidate) => candidate.id === route.id)!;
      expect(route.paths).toHaveLength(Math.max(1, edge.targets.length));
      for (const path of route.paths) expect(path.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('places children inside their compound state (hierarchical layout)', () => {
    const boxes = new Map(layout.states.map((box) => [box.id, box]));
    for (const state of graph.states) {
      if (!state.parent) continue;
      const box = boxes.get(state.id)!;
      const parent = boxes.get(state.parent)!;
      expect(box.x).toBeGreaterThanOrEqual(parent.x);
      expect(box.y).toBeGreaterThanOrEqual(parent.y);
      expect(box.x + box.width).toBeLessThanOrEqual(parent.x + parent.width + 0.01);
      expect(box.y + box.height).toBeLessThanOrEqual(parent.y + parent.height + 0.01);
    }
  });

  it('draws rounded states, marks final states with a second ring and transient ones as such', () => {
    expect(count(svg, 'class="state-box"')).toBe(graph.states.length);
    expect(svg).toMatch(/<rect class="state-box"[^>]* rx="10" ry="10"\/>/);
    const finals = graph.states.filter((state) => state.type === 'final');
    expect(count(svg, 'class="state-final-ring"')).toBe(finals.length);
    expect(svg).toMatch(
      /<g data-state-id="run.completed" data-state-type="final" class="state atomic type-final">/,
    );
    expect(svg).toMatch(
      /<g data-state-id="run.routing" data-state-type="atomic" class="state atomic type-atomic transient">/,
    );
  });

  it('labels transitions with the event and the guard, escaped', () => {
    expect(svg).toContain('>plan.done</text>');
    expect(svg).toContain('>[planAwaitsClarification]</text>');
    expect(svg).not.toMatch(/<text[^>]*>[^<]*[<>&"][^<]*<\/text>/);
    expect(count(svg, 'class="initial"')).toBe(graph.states.filter((state) => state.initial).length);
  });

  it('embeds its style unless asked not to (the inspector page brings its own)', () => {
    expect(svg).toContain('<style>');
    expect(renderSvg(graph, layout, { embedStyle: false })).not.toContain('<style>');
  });

  it('is what toSvg returns: layout then render', async () => {
    expect(await toSvg(graph)).toBe(svg);
  });
});
