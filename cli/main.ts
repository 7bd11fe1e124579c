import { Command } from 'commander';
import { packageVersion } from './cli-checks.ts';
import { registerCommands } from './commands.ts';

/**
 * `toolwarden`: the command line (commander 14, the newest major that supports Node 20).
 * Each command lives in its own module; this file only assembles them.
 */
const program = new Command('toolwarden')
  .description('Tool-using LLM agents as XState actors: evaluate, draw and inspect runs')
  .version(packageVersion(), '-V, --version', 'print the version')
  .showHelpAfterError();

registerCommands(program);

await program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
