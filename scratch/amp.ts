import { z } from 'zod';
import { prepareToolCall } from '../tools/call-tool.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';

const t = defineTool({
  id: 'a.tags',
  description: 'x',
  input: z.object({ tags: z.array(z.string()) }),
  execute: async () => 1,
});
const catalog = new ToolCatalog([t]);
for (const n of [1000, 10000, 100000]) {
  const text = JSON.stringify({ tags: new Array(n).fill(1) });
  const s = z.object({ tags: z.array(z.string()) });
  let t0 = performance.now();
  const r = s.safeParse(JSON.parse(text));
  const zt = performance.now() - t0;
  t0 = performance.now();
  const p = prepareToolCall(catalog, { name: 'a.tags', toolCallId: 'c', input: text });
  const bt = performance.now() - t0;
  const hint = (p as any).result?.retryHint;
  console.log(
    n,
    'zod ms',
    zt.toFixed(1),
    'boundary ms',
    bt.toFixed(1),
    'hint bytes',
    JSON.stringify(hint ?? {}).length,
    'issues',
    hint?.issues?.length,
  );
}
