import { writeFile } from 'node:fs/promises';
import type { AnyStateMachine } from 'xstate';
import { toGraphModel } from './graph-model.ts';
import { toMermaid } from './mermaid.ts';
import { toSvg } from './svg.ts';

/** The formats `renderDiagram` and `toolwarden diagram --format` accept. */
export const DIAGRAM_FORMATS = ['mermaid', 'svg', 'json'] as const;
/** One of {@link DIAGRAM_FORMATS}. */
export type DiagramFormat = (typeof DIAGRAM_FORMATS)[number];

/** `toolwarden diagram` — one line for the command list. */
export const DIAGRAM_DESCRIPTION =
  'Draw the run machine as Mermaid, SVG (ELK layout) or JSON (the graph model)';

export interface DiagramCommandOptions {
  /** Default `mermaid`. */
  format?: DiagramFormat | string;
  /** Write here instead of returning the text to print. */
  out?: string;
  /** Default: the run machine. */
  machine?: AnyStateMachine;
  /** Mermaid direction / ELK direction. Default top to bottom. */
  direction?: 'TB' | 'LR';
}

/** Thrown for a format other than mermaid, svg or json. */
export class DiagramFormatError extends Error {
  override readonly name = 'DiagramFormatError';
}

/** The run machine (or `machine`) drawn in `format`. */
export async function renderDiagram(
  format: DiagramFormat,
  options: Pick<DiagramCommandOptions, 'machine' | 'direction'> = {},
): Promise<string> {
  const graph = toGraphModel(options.machine);
  if (format === 'json') return `${JSON.stringify(graph, null, 2)}\n`;
  if (format === 'mermaid') return toMermaid(graph, { direction: options.direction });
  return toSvg(graph, { direction: options.direction === 'LR' ? 'RIGHT' : 'DOWN' });
}

/**
 * `toolwarden diagram --format mermaid|svg|json [--out FILE]` as a function (issue 8 §2):
 * renders, writes `out` when given, and returns the text (the CLI prints it when there is no
 * `out`).
 *
 * @throws DiagramFormatError for an unknown format.
 */
export async function diagramCommand(
  options: DiagramCommandOptions = {},
): Promise<{ format: DiagramFormat; text: string; out?: string }> {
  const format = (options.format ?? 'mermaid') as DiagramFormat;
  if (!DIAGRAM_FORMATS.includes(format)) {
    throw new DiagramFormatError(
      `Unknown diagram format "${format}"; use one of: ${DIAGRAM_FORMATS.join(', ')}`,
    );
  }
  const text = await renderDiagram(format, options);
  if (options.out) {
    await writeFile(options.out, text, 'utf8');
    return { format, text, out: options.out };
  }
  return { format, text };
}
