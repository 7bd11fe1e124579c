/**
 * The OpenTelemetry SDK packages `toolwarden/telemetry/setup` builds on. They are optional peer
 * dependencies (an app that brings its own SDK, or none, never installs them), so they are loaded
 * here, once, and a missing one fails with the `npm install` line that fixes it instead of a raw
 * `ERR_MODULE_NOT_FOUND` from deep inside the module graph.
 */

/** The packages and the ranges package.json declares for them (`peerDependencies`). */
export const SETUP_PEERS = {
  '@opentelemetry/sdk-node': '^0.223.0 || ^0.301.0',
  '@opentelemetry/exporter-trace-otlp-http': '^0.223.0 || ^0.301.0',
  '@opentelemetry/exporter-metrics-otlp-http': '^0.223.0 || ^0.301.0',
  '@opentelemetry/sdk-metrics': '^2.12.0 || ^3.1.0',
  '@opentelemetry/resources': '^2.12.0 || ^3.1.0',
} as const;

/** Thrown on import of `toolwarden/telemetry/setup` when optional peers are not installed. */
export class TelemetrySetupPeersError extends Error {
  override readonly name = 'TelemetrySetupPeersError';
  constructor(
    /** The packages that failed to load. */
    readonly missing: string[],
    options?: ErrorOptions,
  ) {
    const install = Object.entries(SETUP_PEERS)
      .map(([name, range]) => `'${name}@${range}'`)
      .join(' ');
    super(
      `toolwarden/telemetry/setup needs the OpenTelemetry SDK, an optional peer dependency; missing: ${missing.join(', ')}. ` +
        `Install it with: npm install ${install}`,
      options,
    );
  }
}

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

async function attempt<T>(name: string, load: () => Promise<T>, missing: string[]): Promise<T | undefined> {
  try {
    return await load();
  } catch (error) {
    if (!isModuleNotFound(error)) throw error;
    missing.push(name);
    return undefined;
  }
}

/** The loaded peer modules. */
export interface SetupPeers {
  sdkNode: typeof import('@opentelemetry/sdk-node');
  traceExporter: typeof import('@opentelemetry/exporter-trace-otlp-http');
  metricExporter: typeof import('@opentelemetry/exporter-metrics-otlp-http');
  sdkMetrics: typeof import('@opentelemetry/sdk-metrics');
  resources: typeof import('@opentelemetry/resources');
}

/**
 * Imports every setup peer. Each import is written out (not a loop over names) so bundlers and
 * TypeScript see the specifiers.
 *
 * @throws TelemetrySetupPeersError naming every package that is not installed.
 */
export async function loadSetupPeers(): Promise<SetupPeers> {
  const missing: string[] = [];
  const [sdkNode, traceExporter, metricExporter, sdkMetrics, resources] = await Promise.all([
    attempt('@opentelemetry/sdk-node', () => import('@opentelemetry/sdk-node'), missing),
    attempt(
      '@opentelemetry/exporter-trace-otlp-http',
      () => import('@opentelemetry/exporter-trace-otlp-http'),
      missing,
    ),
    attempt(
      '@opentelemetry/exporter-metrics-otlp-http',
      () => import('@opentelemetry/exporter-metrics-otlp-http'),
      missing,
    ),
    attempt('@opentelemetry/sdk-metrics', () => import('@opentelemetry/sdk-metrics'), missing),
    attempt('@opentelemetry/resources', () => import('@opentelemetry/resources'), missing),
  ]);
  if (!sdkNode || !traceExporter || !metricExporter || !sdkMetrics || !resources) {
    throw new TelemetrySetupPeersError(missing);
  }
  return { sdkNode, traceExporter, metricExporter, sdkMetrics, resources };
}
