import { readdirSync, readFileSync } from 'node:fs';

/** Pids of the processes (not this one) whose command line (NUL-separated, /proc) contains `needle`. */
export function processesRunning(needle: string): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone already
    }
    if (cmdline.includes(needle) && Number(pid) !== process.pid) pids.push(Number(pid));
  }
  return pids;
}
