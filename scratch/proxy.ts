import { z } from 'zod';
import { defineTool } from '../tools/define-tool.ts';
import { prepareToolCall } from '../tools/call-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
const t = defineTool({ id: 'a.b', description: 'x', input: z.object({ q: z.string() }), execute: async () => 1 });
const catalog = new ToolCatalog([t]);
const evil = new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw new Error('keys'); }, getPrototypeOf() { throw new Error('proto'); } });
for (const [name, input] of [['a.b', evil], ['zz', evil], [evil, {}]] as const) {
  try { const r = prepareToolCall(catalog, { name: name as any, toolCallId: 'c', input }); console.log('ok', (r as any).result?.error?.message?.slice(0, 80)); } catch (e) { console.log('THROW', (e as Error).message); }
}
try { defineTool({ id: 'a.c', description: 'x', input: z.object({ constructor: z.string() }), execute: async () => 1 }); console.log('defined constructor'); } catch (e) { console.log('refused', (e as Error).message); }
try { const t2 = defineTool({ id: 'a.d', description: 'x', input: z.object({ ['__proto__']: z.string(), q: z.string() }), execute: async () => 1 }); console.log('defined __proto__', Object.keys(t2.inputSchema.properties ?? {})); } catch (e) { console.log('refused', (e as Error).message); }
