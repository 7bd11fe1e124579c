import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll } from 'vitest';

/**
 * A tracer provider whose spans land in an in-memory exporter, with the AsyncLocalStorage
 * context manager registered for the calling test file (so spans nest across awaits) and the
 * provider shut down after it. Call at the top level of a test file.
 */
export function inMemoryTracing(): { exporter: InMemorySpanExporter; provider: TracerProvider } {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
  });
  afterAll(async () => {
    context.disable();
    await provider.shutdown();
  });
  return { exporter, provider };
}
