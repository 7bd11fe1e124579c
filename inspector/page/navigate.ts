/**
 * Opening a run from anywhere on the page (a row, a fork link, a new fork): the list, the lineage
 * and the forms ask for it here; main.ts connects it to open-run.ts, which draws all of them.
 */

let opener: (key: string | null) => void = () => {};

/** Sets what opening a run does (once, as the page starts). */
export function setOpener(open: (key: string | null) => void): void {
  opener = open;
}

/** Opens the run `key`; `follow` sets the `follow newest` box first. */
export function openRun(key: string | null, follow?: boolean): void {
  if (follow !== undefined) (document.getElementById('follow') as HTMLInputElement).checked = follow;
  opener(key);
}
