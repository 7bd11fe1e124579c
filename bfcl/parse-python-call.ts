/**
 * Parses the Python-style call strings of BFCL's multi-turn ground truth, such as
 * `mv(source='a.pdf', destination='temp')` or `sort('final_report.pdf')`.
 *
 * Only literals are accepted (the ground truth never computes), following Python's grammar:
 *
 * | Python                                   | result                        |
 * |------------------------------------------|-------------------------------|
 * | `'text'`, `"text"`, escapes, `'a' 'b'`   | string (adjacent ones joined) |
 * | `12`, `-3`, `2.5`, `1e-3`, `1_000`       | number                        |
 * | `True`, `False`, `None`                  | `true`, `false`, `null`       |
 * | `[..]`, `(..)` (tuple), `{k: v}`         | array, array, object          |
 *
 * A tuple becomes an array, as BFCL's own checker turns tuples into lists. Positional arguments
 * are kept apart in `positional`: binding them to names needs the function doc
 * ({@link bindPositional}).
 */
export interface PythonCall {
  /** Dotted name as written: `cd`, `math.sqrt`. */
  name: string;
  /** Keyword arguments in source order. */
  args: Record<string, unknown>;
  positional: unknown[];
}

/** Thrown for text that is not a single call with literal arguments; `offset` is 0-based. */
export class PythonCallSyntaxError extends Error {
  override readonly name = 'PythonCallSyntaxError';
  constructor(
    message: string,
    readonly source: string,
    readonly offset: number,
  ) {
    super(
      `${message} at offset ${offset} of ${JSON.stringify(source.length > 120 ? `${source.slice(0, 117)}...` : source)}`,
    );
  }
}

/** @throws PythonCallSyntaxError */
export function parsePythonCall(source: string): PythonCall {
  const parser = new Parser(source);
  const call = parser.call();
  parser.end();
  return call;
}

/**
 * Gives positional arguments the names of the doc's parameters, in declaration order (the
 * multi-turn docs are written from the Python signatures, in order). Keyword arguments win.
 *
 * @throws PythonCallSyntaxError when there are more positional arguments than parameters.
 */
export function bindPositional(call: PythonCall, parameterNames: readonly string[]): Record<string, unknown> {
  if (call.positional.length > parameterNames.length) {
    throw new PythonCallSyntaxError(
      `${call.name} takes ${parameterNames.length} parameters but ${call.positional.length} were given by position`,
      call.name,
      0,
    );
  }
  const bound: Record<string, unknown> = {};
  call.positional.forEach((value, index) => {
    bound[parameterNames[index]!] = value;
  });
  return { ...bound, ...call.args };
}

const ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  v: '\v',
  a: '\x07',
  '0': '\0',
};

class Parser {
  private at = 0;
  constructor(private readonly text: string) {}

  call(): PythonCall {
    this.space();
    const name = this.dottedName();
    this.expect('(');
    const args: Record<string, unknown> = Object.create(null);
    const positional: unknown[] = [];
    this.space();
    while (!this.peek(')')) {
      const keyword = this.keywordAhead();
      if (keyword) {
        if (Object.hasOwn(args, keyword)) this.fail(`keyword argument "${keyword}" repeated`);
        args[keyword] = this.value();
      } else {
        if (Object.keys(args).length > 0) this.fail('positional argument after keyword argument');
        positional.push(this.value());
      }
      this.space();
      if (!this.peek(')')) this.expect(',');
      this.space();
    }
    this.expect(')');
    return { name, args: { ...args }, positional };
  }

  end(): void {
    this.space();
    if (this.at < this.text.length) this.fail('unexpected text after the call');
  }

  private dottedName(): string {
    const parts = [this.identifier()];
    while (this.peek('.')) {
      this.at++;
      parts.push(this.identifier());
    }
    return parts.join('.');
  }

  private identifier(): string {
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.at));
    if (!match) this.fail('expected a name');
    this.at += match[0].length;
    return match[0];
  }

  /** `name=` (not `name==`) ahead: consumes it and returns the name. */
  private keywordAhead(): string | undefined {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)/.exec(this.text.slice(this.at));
    if (!match || ['True', 'False', 'None'].includes(match[1]!)) return undefined;
    this.at += match[0].length;
    return match[1];
  }

  private value(): unknown {
    this.space();
    const c = this.text[this.at];
    if (c === undefined) this.fail('expected a value');
    if (c === '[') return this.sequence('[', ']');
    if (c === '(') return this.tupleOrGroup();
    if (c === '{') return this.dict();
    if (c === '-' || c === '+') {
      this.at++;
      const operand = this.value();
      if (typeof operand !== 'number') this.fail('a sign needs a number');
      return c === '-' ? -operand : operand;
    }
    if (/[0-9.]/.test(c) && /^\.?[0-9]/.test(this.text.slice(this.at))) return this.number();
    if (this.stringAhead()) return this.strings();
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.at))?.[0];
    if (word === 'True' || word === 'False' || word === 'None') {
      this.at += word.length;
      return word === 'True' ? true : word === 'False' ? false : null;
    }
    return this.fail(word ? `"${word}" is not a literal` : `unexpected "${c}"`);
  }

  private sequence(open: string, close: string): unknown[] {
    this.expect(open);
    const items: unknown[] = [];
    this.space();
    while (!this.peek(close)) {
      items.push(this.value());
      this.space();
      if (!this.peek(close)) this.expect(',');
      this.space();
    }
    this.expect(close);
    return items;
  }

  private tupleOrGroup(): unknown {
    this.expect('(');
    this.space();
    if (this.peek(')')) {
      this.at++;
      return [];
    }
    const first = this.value();
    this.space();
    if (this.peek(')')) {
      this.at++;
      return first;
    }
    this.expect(',');
    const rest: unknown[] = [];
    this.space();
    while (!this.peek(')')) {
      rest.push(this.value());
      this.space();
      if (!this.peek(')')) this.expect(',');
      this.space();
    }
    this.expect(')');
    return [first, ...rest];
  }

  private dict(): Record<string, unknown> {
    this.expect('{');
    const out: Record<string, unknown> = {};
    this.space();
    while (!this.peek('}')) {
      const key = this.value();
      if (key !== null && typeof key === 'object') this.fail('a dict key must be a string or number');
      this.space();
      this.expect(':');
      Object.defineProperty(out, String(key), {
        value: this.value(),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.space();
      if (!this.peek('}')) this.expect(',');
      this.space();
    }
    this.expect('}');
    return out;
  }

  private number(): number {
    const match = /^(?:\d[\d_]*)?(?:\.\d[\d_]*|\.)?(?:[eE][+-]?\d+)?/.exec(this.text.slice(this.at));
    const text = match?.[0] ?? '';
    if (!/\d/.test(text)) this.fail('expected a number');
    this.at += text.length;
    return Number(text.replaceAll('_', ''));
  }

  private stringAhead(): boolean {
    return /^(?:[rRuU]|[rR][bB]|[bB][rR]|[bB])?['"]/.test(this.text.slice(this.at));
  }

  /** One or more adjacent string literals, joined as Python does. */
  private strings(): string {
    let out = this.string();
    for (;;) {
      const before = this.at;
      this.space();
      if (!this.stringAhead()) {
        this.at = before;
        return out;
      }
      out += this.string();
    }
  }

  private string(): string {
    const prefix = /^[rRuUbB]*/.exec(this.text.slice(this.at))![0];
    const raw = /[rR]/.test(prefix);
    this.at += prefix.length;
    const quote = this.text[this.at]!;
    const triple = this.text.startsWith(quote.repeat(3), this.at);
    const closing = triple ? quote.repeat(3) : quote;
    this.at += closing.length;
    let out = '';
    for (;;) {
      if (this.at >= this.text.length) this.fail('unterminated string');
      if (this.text.startsWith(closing, this.at)) {
        this.at += closing.length;
        return out;
      }
      const c = this.text[this.at]!;
      if (c === '\n' && !triple) this.fail('line break inside a string');
      if (c !== '\\') {
        out += c;
        this.at++;
        continue;
      }
      const next = this.text[this.at + 1];
      if (next === undefined) this.fail('unterminated string');
      if (raw) {
        out += c + next;
        this.at += 2;
        continue;
      }
      this.at += 2;
      if (next === '\n') continue;
      if (next in ESCAPES && !(next === '0' && /[0-7]/.test(this.text[this.at] ?? ''))) {
        out += ESCAPES[next];
      } else if (next === 'x' || next === 'u' || next === 'U') {
        const length = next === 'x' ? 2 : next === 'u' ? 4 : 8;
        const hex = this.text.slice(this.at, this.at + length);
        if (!new RegExp(`^[0-9a-fA-F]{${length}}$`).test(hex)) this.fail(`bad \\${next} escape`);
        out += String.fromCodePoint(Number.parseInt(hex, 16));
        this.at += length;
      } else if (/[0-7]/.test(next)) {
        const octal = /^[0-7]{0,2}/.exec(this.text.slice(this.at))![0];
        out += String.fromCodePoint(Number.parseInt(next + octal, 8));
        this.at += octal.length;
      } else {
        out += `\\${next}`; // Python keeps unknown escapes as written
      }
    }
  }

  private space(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at]!)) this.at++;
  }

  private peek(token: string): boolean {
    return this.text.startsWith(token, this.at);
  }

  private expect(token: string): void {
    if (!this.peek(token)) this.fail(`expected "${token}"`);
    this.at += token.length;
  }

  private fail(message: string): never {
    throw new PythonCallSyntaxError(message, this.text, this.at);
  }
}
