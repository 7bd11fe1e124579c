/**
 * What a wrong-typed argument to a server's union chain costs (issue 39 item 5, "Show"): the
 * hostile server's `chain` tool (test/support/mcp-hostile-server.mjs: 25 `$defs` levels, each an
 * `anyOf` of three references to the one below) and the same chain at 18 levels, over stdio
 * through `mcpToolset` and the boundary, called with `{ root: 42 }` (the model's commonest
 * mistake: a number for a string). Before the step budget: 12 s at 18 levels on a loaded
 * machine, no answer after 240 s at 25 (4 GB RSS). Targets: the hint in < 100 ms of CPU, the
 * longest event-loop gap < 100 ms, RSS growth < 50 MB.
 *
 * Each level runs in a child process of its own, so RSS is that call's alone.
 *
 *     node --import tsx bench/mcp-schema-chain.bench.ts [--calls 5]
 *
 * @module
 */

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '5' }, levels: { type: 'string' } },
});
const calls = Number(values.calls);

if (values.levels === undefined) {
  console.log(
    'anyOf chain, wrong-typed argument, through mcpToolset over stdio (one child process per level)',
  );
  console.log(
    'levels | CPU ms per refusal (max of calls) | longest event-loop gap ms | RSS growth MB | hint',
  );
  for (const levels of [18, 25]) {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', import.meta.filename, '--levels', String(levels), '--calls', String(calls)],
      { encoding: 'utf8' },
    );
    console.log(out.trim());
  }
} else {
  await measure(Number(values.levels));
}

async function measure(levels: number): Promise<void> {
  const { mcpToolset } = await import('../mcp/index.ts');
  const { callTool } = await import('../tools/call-tool.ts');
  const { ToolCatalog } = await import('../tools/tool-catalog.ts');
  const toolset = await mcpToolset({
    name: 'hostile',
    transport: {
      command: process.execPath,
      args: [join(import.meta.dirname, '..', 'test', 'support', 'mcp-hostile-server.mjs')],
      env: { HOSTILE_CHAIN_LEVELS: String(levels) },
    },
    onWarning: () => {},
  });
  const catalog = new ToolCatalog(toolset.tools);
  const call = (n: number, input: unknown) => {
    const toolCallId = `bench:t1:c${n}`;
    return callTool(catalog, { name: 'hostile.chain', toolCallId, input }, {
      meta: { runId: 'bench', turnId: 'bench:t1', toolCallId, agentId: 'bench', attempt: 1 },
    } as never);
  };
  // A valid call first: modules and the hint's example are loaded outside the measurement.
  await call(0, { root: 'fine' });
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  // The longest stretch between two turns of a 5 ms timer, in wall time and in this process's
  // CPU time (on a shared machine wall time also counts other processes' turns).
  let gapMs = 0;
  let cpuGapMs = 0;
  let lastTurn = performance.now();
  let lastCpu = process.cpuUsage();
  const sampler = setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    gapMs = Math.max(gapMs, now - lastTurn);
    cpuGapMs = Math.max(cpuGapMs, (cpu.user + cpu.system) / 1000);
    lastTurn = now;
    lastCpu = process.cpuUsage();
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 5);
  let cpuMax = 0;
  let hint = '';
  for (let i = 1; i <= calls; i++) {
    const cpu = process.cpuUsage();
    const result = await call(i, { root: 42 });
    const used = process.cpuUsage(cpu);
    cpuMax = Math.max(cpuMax, (used.user + used.system) / 1000);
    hint = `${result.retryHint?.reason}/${result.retryHint?.issues?.[0]?.constraint}`;
    // A refusal never reaches the server, so the call is one synchronous stretch: let the timer turn.
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  await toolset.close();
  console.log(
    `${levels} | ${cpuMax.toFixed(1)} | ${cpuGapMs.toFixed(1)} CPU (${gapMs.toFixed(1)} wall) | ${((rssPeak - rssBefore) / 1024 / 1024).toFixed(1)} | ${hint}`,
  );
}
