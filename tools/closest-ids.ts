/**
 * The known ids nearest to `name` by edit distance (also comparing against the part after the
 * toolset, so `upsert_profil` finds `crm.upsert_profile`), at most `limit`, nearest first.
 */
export function closestIds(name: string, ids: readonly string[], limit = 3): string[] {
  const target = name.toLowerCase();
  return ids
    .map((id) => {
      const lower = id.toLowerCase();
      const bare = lower.slice(lower.indexOf('.') + 1);
      return { id, distance: Math.min(levenshtein(target, lower), levenshtein(target, bare)) };
    })
    .sort((a, b) => a.distance - b.distance || a.id.localeCompare(b.id))
    .slice(0, limit)
    .map((entry) => entry.id);
}

/** Edit distance with two rolling rows: O(|a|·|b|) time, O(|b|) memory. Inputs are cut at 256. */
export function levenshtein(a: string, b: string): number {
  const s = a.slice(0, 256);
  const t = b.slice(0, 256);
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      const substitution = previous[j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[t.length]!;
}
