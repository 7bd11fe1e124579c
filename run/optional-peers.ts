/**
 * Optional peer dependencies of the entry points (docs/packaging.md): an entry point that needs
 * packages the app may not have installed checks for them when it is imported, and fails with
 * one error naming every missing package and the `npm install` line that fixes it, never a bare
 * `ERR_MODULE_NOT_FOUND` from deep inside the module graph (issue 28 item 3).
 *
 * For the check to run at all, the entry point's module graph must not import a value from those
 * packages statically (an unresolvable static import fails before any module runs): they are
 * imported as types, or dynamically where they are used.
 *
 * @module
 */

/** Thrown on import of an entry point whose optional peers are not installed. */
export class MissingPeerError extends Error {
  override readonly name = 'MissingPeerError';

  constructor(
    /** The entry point, `toolwarden/sqlite`. */
    readonly entry: string,
    /** The packages that could not be resolved. */
    readonly missing: string[],
    /** Every package the entry point needs, with the range package.json declares. */
    readonly peers: Record<string, string>,
  ) {
    const install = Object.entries(peers)
      .filter(([name]) => missing.includes(name))
      .map(([name, range]) => `'${name}@${range}'`)
      .join(' ');
    super(
      `${entry} needs ${missing.join(', ')}, ${missing.length > 1 ? 'optional peer dependencies' : 'an optional peer dependency'} ` +
        `of toolwarden that is not installed. Install it with: npm install ${install}`,
    );
  }
}

/**
 * Throws {@link MissingPeerError} unless every package of `peers` resolves from here (the app's
 * `node_modules`, as toolwarden's own imports would resolve it).
 */
export function requireOptionalPeers(
  entry: string,
  peers: Record<string, string>,
  resolves: (name: string) => boolean = resolvable,
): void {
  const missing = Object.keys(peers).filter((name) => !resolves(name));
  if (missing.length > 0) throw new MissingPeerError(entry, missing, peers);
}

function resolvable(name: string): boolean {
  try {
    import.meta.resolve(name);
    return true;
  } catch {
    return false;
  }
}
