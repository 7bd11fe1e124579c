/**
 * What can be trusted in JSON arguments that were cut short (a model's output stopped mid-call;
 * the boundary reports `invalid_arguments` with `priorInput = { $raw: text }`).
 *
 * Everything written completely before the cut is kept; whatever the cut went through is not:
 *
 * | open at the cut                   | kept                | dropped, listed in `cut` |
 * |-----------------------------------|---------------------|--------------------------|
 * | a string (`"Berkel`)              | —                   | the member holding it    |
 * | a number or literal (`60`, `tru`) | —                   | the member (60 may have been 600) |
 * | an array (`[1, 2`)                | —                   | the member (elements may be missing) |
 * | an object (`{"a": 1, "b`)         | its complete members | its unfinished member   |
 * | a key or its colon (`"b":`)       | —                   | the key                  |
 *
 * Closing an open string or array instead would send a value nobody wrote (`"Berkel"`, `[1, 2]`)
 * that the boundary accepts; a dropped member that is required comes back as `missing_fields`,
 * which a person can answer.
 */
export interface RecoveredJson {
  /** The complete members of the top-level object; `{}` when nothing could be read. */
  value: Record<string, unknown>;
  /** Dotted paths of members the cut went through (`time`, `address.city`). */
  cut: string[];
  /**
   * Dotted paths of the objects still open at the cut, innermost first (`''` is the top level):
   * members after the cut, never seen, belong to them.
   */
  open: string[];
}

export function recoverTruncatedJson(text: string): RecoveredJson {
  const cut: string[] = [];
  const open: string[] = [];
  try {
    const parsed = new PrefixParser(text, cut, open).value([]);
    if (parsed.value !== null && typeof parsed.value === 'object' && !Array.isArray(parsed.value)) {
      return { value: parsed.value as Record<string, unknown>, cut, open };
    }
  } catch {
    // Not a prefix of JSON (a syntax error before the cut): nothing can be trusted.
  }
  return { value: {}, cut: [], open: [''] };
}

interface Parsed {
  value: unknown;
  /** False when the text ended inside this value. */
  complete: boolean;
}

class SyntaxErrorInPrefix extends Error {}

/** A recursive-descent JSON parser that stops, rather than fails, where the text ends. */
class PrefixParser {
  private at = 0;

  constructor(
    private readonly text: string,
    private readonly cut: string[],
    private readonly open: string[],
  ) {}

  value(path: string[]): Parsed {
    this.skipSpace();
    const c = this.text[this.at];
    if (c === undefined) return { value: undefined, complete: false };
    if (c === '{') return this.object(path);
    if (c === '[') return this.array(path);
    if (c === '"') return this.string();
    return this.token();
  }

  private object(path: string[]): Parsed {
    const parsed = this.members(path);
    if (!parsed.complete) this.open.push(path.join('.'));
    return parsed;
  }

  private members(path: string[]): Parsed {
    this.at++;
    const out: Record<string, unknown> = {};
    for (;;) {
      this.skipSpace();
      if (this.atEnd()) return { value: out, complete: false };
      if (this.text[this.at] === '}') {
        this.at++;
        return { value: out, complete: true };
      }
      const key = this.string();
      if (!key.complete) return { value: out, complete: false };
      const name = key.value as string;
      this.skipSpace();
      if (this.atEnd()) {
        this.cut.push([...path, name].join('.'));
        return { value: out, complete: false };
      }
      this.expect(':');
      const member = this.value([...path, name]);
      if (!member.complete) {
        const partialObject =
          member.value !== null && typeof member.value === 'object' && !Array.isArray(member.value);
        if (partialObject) define(out, name, member.value);
        else this.cut.push([...path, name].join('.'));
        return { value: out, complete: false };
      }
      define(out, name, member.value);
      this.skipSpace();
      if (this.atEnd()) return { value: out, complete: false };
      if (this.text[this.at] === ',') this.at++;
      else this.expect('}', false);
    }
  }

  private array(path: string[]): Parsed {
    this.at++;
    const out: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.atEnd()) return { value: out, complete: false };
      if (this.text[this.at] === ']') {
        this.at++;
        return { value: out, complete: true };
      }
      const item = this.value([...path, String(out.length)]);
      if (!item.complete) return { value: out, complete: false };
      out.push(item.value);
      this.skipSpace();
      if (this.atEnd()) return { value: out, complete: false };
      if (this.text[this.at] === ',') this.at++;
      else this.expect(']', false);
    }
  }

  private string(): Parsed {
    if (this.text[this.at] !== '"') throw new SyntaxErrorInPrefix(`expected a string at ${this.at}`);
    const start = this.at;
    for (let i = start + 1; i < this.text.length; i++) {
      const c = this.text[i];
      if (c === '\\') i++;
      else if (c === '"') {
        this.at = i + 1;
        return { value: JSON.parse(this.text.slice(start, i + 1)), complete: true };
      }
    }
    this.at = this.text.length;
    return { value: undefined, complete: false };
  }

  /** A number or `true`/`false`/`null`; one that runs into the end may have been cut. */
  private token(): Parsed {
    const match = /^[-+0-9.eEa-z]+/.exec(this.text.slice(this.at));
    if (!match) throw new SyntaxErrorInPrefix(`unexpected "${this.text[this.at]}" at ${this.at}`);
    this.at += match[0].length;
    if (this.atEnd()) return { value: undefined, complete: false };
    return { value: JSON.parse(match[0]), complete: true };
  }

  /** Consumes `char`, or throws; `consume: false` only checks it (the caller's loop consumes it). */
  private expect(char: string, consume = true): void {
    if (this.text[this.at] !== char) {
      throw new SyntaxErrorInPrefix(`expected "${char}" at ${this.at}, found "${this.text[this.at]}"`);
    }
    if (consume) this.at++;
  }

  private skipSpace(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at]!)) this.at++;
  }

  private atEnd(): boolean {
    return this.at >= this.text.length;
  }
}

/** Plain assignment would turn a `__proto__` key into a prototype change. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
