/**
 * What the server tells the page in `<script type="application/json" id="inspector-config">`
 * (inspector-page.ts writes it from the server's options).
 */
export interface PageConfig {
  /** Whether the page may answer waiting runs (attached to a runtime and not read-only). */
  canAnswer: boolean;
  /** Whether the page may fork runs. */
  canFork: boolean;
  /** A Jaeger UI to link traces to, or null. */
  jaegerUrl: string | null;
  /** The simple view's arrows: simple edge id → the ways (lists of full-chart edge ids) it stands for. */
  via: Record<string, string[][]> | null;
  /** Full-chart state id → the simple view's state that shows it. */
  shownAs: Record<string, string> | null;
  /** Simple edge id → the label of each way of `via`. */
  wayLabels: Record<string, string[]> | null;
}

let read: PageConfig | undefined;

/** The page's config, read once from its JSON script. */
export function pageConfig(): PageConfig {
  read ??= JSON.parse(document.getElementById('inspector-config')?.textContent ?? 'null') as PageConfig;
  return read;
}

/** The machine the page draws (`<body data-machine-id>`). */
export function machineId(): string {
  return document.body.dataset.machineId ?? '';
}
