import { existsSync, readFileSync } from 'node:fs';

/** The JSON values of a JSON Lines file, one per non-empty line; `[]` when the file is not there. */
export const readJsonLines = <T>(path: string): T[] =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as T)
    : [];
