/** Active states as the page names them. */

/** The innermost of `active` (ids, ancestors first), without the machine's prefix: `awaiting.clarification`. */
export function leafStates(active: string[], machineId: string): string {
  return active
    .filter((id) => !active.some((other) => other.startsWith(`${id}.`)))
    .map((id) => (id.startsWith(`${machineId}.`) ? id.slice(machineId.length + 1) : id))
    .join(', ');
}
