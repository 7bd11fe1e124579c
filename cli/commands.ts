import { type Command, InvalidArgumentError, Option } from 'commander';
import { INSPECT_HELP } from '../inspector/inspect-command.ts';
import type { McpServeOptions } from '../mcp/mcp-command.ts';
import { portOption } from './cli-checks.ts';
import type { EvalAgainstOptions } from './eval-against.ts';
import type { EvalBfclOptions } from './eval-bfcl.ts';

/** Commander's way of taking an option more than once. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A number above 0 (`--idle-timeout 0.5`, `--max-sessions 20`). */
function positiveNumber(value: string): number {
  const n = Number(value);
  if (!(n > 0)) throw new InvalidArgumentError(`"${value}" is not a number above 0`);
  return n;
}

/** Parses a non-negative integer option (ports, counts, milliseconds). */
export function integerOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError(`"${value}" is not a non-negative integer`);
  return n;
}

/**
 * Adds every command to `program`. Each command's module is imported only when it runs, so
 * `toolwarden --help` stays fast and a command never pays for another's dependencies.
 */
export function registerCommands(program: Command): void {
  // A command's options are read only before its subcommand (commands made after this inherit it):
  // `eval --json` (with --against) and `eval bfcl --json` are two options, and without this commander
  // gave `eval bfcl --json FILE` to eval, so bfcl wrote its report elsewhere.
  program.enablePositionalOptions();
  registerDiagram(program);
  registerInspect(program);
  registerEvalBfcl(registerEval(program));
  registerMcp(program);
  registerCatalog(program);
  registerDemo(program);
}

/** `toolwarden diagram`: the run machine as Mermaid, SVG or JSON. */
function registerDiagram(program: Command): void {
  program
    .command('diagram')
    .description('Draw the run machine as Mermaid, SVG (ELK layout) or JSON (the graph model)')
    .addOption(
      new Option('-f, --format <format>', 'output format')
        .choices(['mermaid', 'svg', 'json'])
        .default('mermaid'),
    )
    .addOption(
      new Option('-d, --direction <direction>', 'layout direction').choices(['TB', 'LR']).default('TB'),
    )
    .option('-o, --out <file>', 'write to FILE instead of standard output')
    .action(async (options: { format: string; direction: 'TB' | 'LR'; out?: string }) => {
      const { diagramCommand } = await import('../machines/diagram/diagram-command.ts');
      const drawn = await diagramCommand(options);
      if (drawn.out) console.error(`wrote ${drawn.format} to ${drawn.out}`);
      else process.stdout.write(drawn.text);
    });
}

/** `toolwarden inspect`: the live inspector, with a demo agent unless `--no-demo`. */
function registerInspect(program: Command): void {
  program
    .command('inspect')
    .description('Serve the live state-chart inspector on 127.0.0.1 (with a demo agent)')
    .option('-p, --port <port>', 'port to listen on (0: any free port)', portOption, 0)
    .option('--no-demo', 'serve the chart without the demo agent')
    .option('--answer-after <ms>', 'the demo answers its clarification after this long', integerOption, 4000)
    .option('--every <ms>', 'start a new demo run this often', integerOption, 15_000)
    .addHelpText('after', INSPECT_HELP)
    .action(async (options: { port: number; demo: boolean; answerAfter: number; every: number }) => {
      const { inspectCommand } = await import('../inspector/inspect-command.ts');
      const session = await inspectCommand({
        port: options.port,
        demo: options.demo,
        answerAfterMs: options.answerAfter,
        everyMs: options.every,
      });
      const stop = () => {
        void session.close().finally(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}

/** `toolwarden eval [--against <store>]`: replays stored runs; the parent of `eval bfcl`. */
function registerEval(program: Command): Command {
  const evaluate = program
    .command('eval')
    .description('Evaluate agent runs on real input, or replay stored runs with a new planner or policy set')
    .option(
      '--against <store>',
      'replay the finished runs of this store (a SQLite file or a postgres:// URL)',
    )
    .option('--config <module>', 'with --against: default export { tools, planner?, policies? }')
    .option('--runs <ids>', 'with --against: only these run ids, comma-separated')
    .option('--json <file>', 'with --against: write the comparisons here')
    .addHelpText(
      'after',
      `
With --against, each stored run starts again from its first messages under the config's planner
and policies; calls identical to the record get its results (nothing runs twice) and the replay is
compared with the original step by step. Exit code 1 when a run changed.

  npm run eval -- --against runs.db --config replay.config.ts`,
    )
    .action(async (options: EvalAgainstOptions & { against?: string }) => {
      if (options.against === undefined) {
        evaluate.help();
        return;
      }
      const { evalAgainstCommand } = await import('./eval-against.ts');
      const { exitCode } = await evalAgainstCommand({ ...options, against: options.against });
      process.exitCode = exitCode;
    });
  return evaluate;
}

/** `toolwarden eval bfcl`: BFCL entries through the runtime, scripted or with a real model. */
function registerEvalBfcl(evaluate: Command): void {
  evaluate
    .command('bfcl')
    .description(
      'Run BFCL entries through the runtime with injected mistakes; print a table, write a JSON report',
    )
    .option('-c, --category <list>', 'categories, comma-separated', 'live_simple,live_multiple')
    .option('-l, --limit <n>', 'entries per category, spread over it, or "all"', '100')
    .option('-s, --seed <seed>', 'seed of the mistakes', '1')
    .option('--mistakes <kinds>', 'draw mistakes only of these kinds, comma-separated')
    .option('--json <file>', 'write the report here (default .toolwarden/reports/bfcl-<time>.json)')
    .option('--data <dir>', 'the BFCL data folder (default: see below)')
    .option('--concurrency <n>', 'runs at a time', integerOption)
    .option(
      '--model <url>',
      'a real model plans each case: an OpenAI-compatible base URL (e.g. http://127.0.0.1:8765/v1)',
    )
    .option('--model-id <id>', 'the model name sent to that server', 'default')
    .option(
      '--hints <style>',
      'with --model: how a refused call reads to the model: structured or plain',
      'structured',
    )
    .addHelpText(
      'after',
      `
BFCL functions are not callable services: each entry's tools validate their input at the
boundary and echo it back, and the echoes are checked against the ground truth.
Data folder, the first that applies: --data DIR, $TOOLWARDEN_BFCL_DIR, ../shared/data/bfcl beside
the checkout, the user cache (~/.cache/toolwarden/bfcl), else a download at the pinned commit.

Examples:
  toolwarden eval bfcl                      # 100 entries each of live_simple and live_multiple
  toolwarden eval bfcl -c simple_python,parallel -l all --json report.json
  toolwarden eval bfcl -c multi_turn_miss_param -l 20
  toolwarden eval bfcl --model http://127.0.0.1:8765/v1 -c simple_python,live_simple -l 50 --hints plain`,
    )
    .action(async (options: EvalBfclOptions & { model?: string; modelId?: string; hints?: string }) => {
      const { evalBfclCommand } = await import('./eval-bfcl.ts').catch((error: unknown) => {
        // The published package leaves the eval (bfcl/, cli-progress) out: it is this repository's
        // main job, not part of the library.
        if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
        throw new Error(
          '`toolwarden eval bfcl` runs from a checkout of the repository (`npm start`); the installed package leaves the BFCL eval out',
          { cause: error },
        );
      });
      if (options.model !== undefined) {
        const { evalBfclModelCommand } = await import('./eval-bfcl-model.ts');
        const { exitCode } = await evalBfclModelCommand({
          ...options,
          model: options.model,
          category:
            options.category === 'live_simple,live_multiple' ? 'simple_python,live_simple' : options.category,
        });
        process.exitCode = exitCode;
        return;
      }
      const { exitCode } = await evalBfclCommand(options);
      process.exitCode = exitCode;
    });
}

/** `toolwarden mcp serve`: a config's tools as a policy-enforcing MCP gateway. */
function registerMcp(program: Command): void {
  const mcp = program
    .command('mcp')
    .description("MCP: serve a runtime's tools as a policy-enforcing, traced MCP gateway");
  mcp
    .command('serve')
    .description('Serve the tools of a config module (and of the MCP servers it names) over MCP')
    .requiredOption(
      '-c, --config <file>',
      'config module: export default { tools, mcpServers, policies, caps, ... }',
    )
    .option('--stdio', 'serve one session on stdin/stdout')
    .option('-p, --port <port>', 'streamable HTTP port (0: any free port)', portOption)
    .option(
      '--host <host>',
      "HTTP bind address (default 127.0.0.1; off loopback requires --token; 0.0.0.0 accepts this machine's addresses and host name as Host, other names need --allowed-host)",
    )
    .option('--token <token>', 'bearer token HTTP clients must send')
    .option(
      '--allowed-host <name>',
      'a Host name HTTP clients may use besides loopback and the bind address, e.g. a proxy or DNS name (repeatable)',
      collect,
    )
    .option(
      '--allowed-origin <origin>',
      'an Origin browser clients may send besides loopback (repeatable)',
      collect,
    )
    .option('--idle-timeout <minutes>', 'end an HTTP session idle this long (default 15)', positiveNumber)
    .option('--max-sessions <n>', 'HTTP sessions open at once (default 100)', positiveNumber)
    .action(async (options: McpServeOptions) => {
      const { requireOptionalPeers } = await import('../run/optional-peers.ts');
      requireOptionalPeers('toolwarden mcp serve', { '@modelcontextprotocol/sdk': '^1.32.2' });
      const { mcpServeCommand } = await import('../mcp/mcp-command.ts');
      let gateway: Awaited<ReturnType<typeof mcpServeCommand>>;
      try {
        gateway = await mcpServeCommand(options);
      } catch (error) {
        // Serving nothing is a failure: say why and exit (its MCP servers are closed already).
        console.error(`toolwarden mcp serve: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      }
      if (gateway.url) console.error(`toolwarden MCP gateway on ${gateway.url}`);
      const stop = () => {
        void gateway.close().finally(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}

/** `toolwarden catalog`: tool_schemas.json of a config's tools. */
function registerCatalog(program: Command): void {
  program
    .command('catalog')
    .description(
      "Print (or write) tool_schemas.json for a config's tools: id, service, toolset, title, description, tags, payload and result JSON Schema, confirmation",
    )
    .requiredOption('-c, --config <file>', 'config module: export default { tools, mcpServers, ... }')
    .option('-o, --out <file>', 'write tool_schemas.json to FILE instead of standard output')
    .option('--served', "only the tools the config's gateway serves a session (its policies applied)")
    .action(async (options: { config: string; out?: string; served?: boolean }) => {
      const { catalogCommand } = await import('../mcp/mcp-command.ts');
      const { text, count } = await catalogCommand(options);
      if (options.out) console.error(`wrote ${count} tools to ${options.out}`);
      else process.stdout.write(text);
    });
}

/** `toolwarden demo`: a bad tool call repaired through its RetryHint. */
function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('Run a short tool-boundary demo: a bad tool call repaired through its RetryHint')
    .action(async () => {
      const { runDemo } = await import('./demo.ts');
      await runDemo();
    });
}
