/**
 * `toolwarden/diagram`: the run machine's state chart as a graph model, Mermaid or SVG
 * (docs/inspection.md). SVG layout needs the optional peer `elkjs`; the graph model and Mermaid
 * need nothing.
 *
 * @packageDocumentation
 */
export { DIAGRAM_FORMATS, type DiagramFormat, DiagramFormatError, renderDiagram } from './diagram-command.ts';
export type { LayoutOptions } from './elk-layout.ts';
export { type GraphEdge, type GraphModel, type GraphState, toGraphModel } from './graph-model.ts';
export { type MermaidOptions, toMermaid } from './mermaid.ts';
export { type SvgOptions, toSvg } from './svg.ts';
