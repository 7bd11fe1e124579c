import type { Command } from 'commander';

/** Adds every command to `program`. New commands register here. */
export function registerCommands(program: Command): void {
  program
    .command('demo')
    .description('Run a short tool-boundary demo: a bad tool call repaired through its RetryHint')
    .action(async () => {
      const { runDemo } = await import('./demo.ts');
      await runDemo();
    });
}
