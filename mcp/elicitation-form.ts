/**
 * An MCP form (`elicitation/create`'s `requestedSchema`, MCP 2025-11-25: a flat object of
 * string, number, integer, boolean and enum properties) as a question a person answers in one
 * text (the run's clarification), and that text as the form's `content`.
 *
 * | form                          | the person answers               | content                               |
 * |-------------------------------|----------------------------------|---------------------------------------|
 * | no properties                 | (a confirmation: approve / deny) | `{}`                                  |
 * | one property, or one required | the value as text (`Ada`, `42`, `yes`) | `{ <property>: value }`, typed by the property |
 * | several                       | a JSON object of them            | the object's known properties, each typed |
 *
 * @module
 */

/** MCP's `requestedSchema` as far as it is read here. */
export interface FormSchema {
  type?: string;
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
}

/** The form's content from a person's text, or what is wrong with the text (said to the person). */
export type FormContent = { ok: true; content: Record<string, unknown> } | { ok: false; problem: string };

/** The question put to the person: the server's message, then how to answer when the form has fields. */
export function formQuestion(message: string, schema: FormSchema | undefined, problem?: string): string {
  const properties = Object.entries(schema?.properties ?? {});
  const again = problem === undefined ? '' : `That answer could not be used: ${problem}. `;
  if (properties.length === 0) return `${again}${message}`;
  const required = new Set(schema?.required ?? []);
  const fields = properties.map(([name, property]) => {
    const notes = [describeType(property), required.has(name) ? 'required' : undefined]
      .filter((note) => note !== undefined)
      .join(', ');
    const description = typeof property.description === 'string' ? `: ${property.description}` : '';
    return `- ${name} (${notes})${description}`;
  });
  const single = soleField(schema);
  const how =
    properties.length === 1
      ? 'Answer with the value.'
      : `Answer with a JSON object of these fields${single === undefined ? '' : `, or with the ${single} alone`}.`;
  return `${again}${message}\n${fields.join('\n')}\n${how}`;
}

/** The form's content from `text`. Unknown fields of a JSON answer are left out. */
export function formContent(schema: FormSchema | undefined, text: string | undefined): FormContent {
  const properties = schema?.properties ?? {};
  const names = Object.keys(properties);
  if (names.length === 0) return { ok: true, content: {} };
  const answer = (text ?? '').trim();
  const parsed = answer.startsWith('{') ? parseObject(answer) : undefined;
  if (parsed === undefined) {
    const single = soleField(schema);
    if (single === undefined)
      return { ok: false, problem: `answer with a JSON object of ${names.join(', ')}` };
    const value = typed(properties[single]!, answer);
    return 'problem' in value
      ? { ok: false, problem: `${single}: ${value.problem}` }
      : { ok: true, content: { [single]: value.value } };
  }
  if (parsed === null) return { ok: false, problem: 'the answer starts with { but is not a JSON object' };
  const content: Record<string, unknown> = {};
  for (const name of names) {
    if (!Object.hasOwn(parsed, name)) continue;
    const value = typed(properties[name]!, parsed[name]);
    if ('problem' in value) return { ok: false, problem: `${name}: ${value.problem}` };
    content[name] = value.value;
  }
  const missing = (schema?.required ?? []).filter((name) => !Object.hasOwn(content, name));
  if (missing.length > 0) return { ok: false, problem: `missing ${missing.join(', ')}` };
  return { ok: true, content };
}

/** The field a plain-text answer fills: the only one, or the only required one. */
function soleField(schema: FormSchema | undefined): string | undefined {
  const names = Object.keys(schema?.properties ?? {});
  if (names.length === 1) return names[0];
  const required = (schema?.required ?? []).filter((name) => names.includes(name));
  return required.length === 1 ? required[0] : undefined;
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The values an enum property allows: `enum`, or the `const`s of `oneOf` / `anyOf` (titled enums). */
function allowed(property: Record<string, unknown>): unknown[] | undefined {
  if (Array.isArray(property.enum)) return property.enum;
  const options = Array.isArray(property.oneOf)
    ? property.oneOf
    : Array.isArray(property.anyOf)
      ? property.anyOf
      : [];
  const consts = options.flatMap((option) =>
    option !== null && typeof option === 'object' && 'const' in option
      ? [(option as { const: unknown }).const]
      : [],
  );
  return consts.length > 0 ? consts : undefined;
}

function describeType(property: Record<string, unknown>): string {
  const items = property.items as Record<string, unknown> | undefined;
  const choices = property.type === 'array' && items ? allowed(items) : allowed(property);
  const type = typeof property.type === 'string' ? property.type : 'string';
  return choices === undefined
    ? type
    : `${property.type === 'array' ? 'some of' : 'one of'} ${choices.map((choice) => String(choice)).join(', ')}`;
}

/** `value` (text, or a JSON answer's value) as the property's type. */
function typed(property: Record<string, unknown>, value: unknown): { value: unknown } | { problem: string } {
  const text = typeof value === 'string' ? value.trim() : undefined;
  switch (property.type) {
    case 'boolean': {
      if (typeof value === 'boolean') return { value };
      if (text !== undefined && /^(true|yes|y|1)$/i.test(text)) return { value: true };
      if (text !== undefined && /^(false|no|n|0)$/i.test(text)) return { value: false };
      return { problem: 'answer yes or no' };
    }
    case 'number':
    case 'integer': {
      const number =
        typeof value === 'number' ? value : text === '' || text === undefined ? Number.NaN : Number(text);
      if (!Number.isFinite(number)) return { problem: 'answer a number' };
      if (property.type === 'integer' && !Number.isInteger(number))
        return { problem: 'answer a whole number' };
      return { value: number };
    }
    case 'array': {
      const items = Array.isArray(value)
        ? value
        : (text ?? '')
            .split(',')
            .map((item) => item.trim())
            .filter((item) => item !== '');
      const choices = allowed((property.items as Record<string, unknown>) ?? {});
      const wrong = choices === undefined ? [] : items.filter((item) => !choices.includes(item));
      return wrong.length > 0 ? { problem: `not one of the choices: ${wrong.join(', ')}` } : { value: items };
    }
    default: {
      const string =
        text ?? (typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined);
      if (string === undefined) return { problem: 'answer a text' };
      const choices = allowed(property);
      if (choices !== undefined && !choices.includes(string)) {
        return { problem: `answer one of ${choices.map((choice) => String(choice)).join(', ')}` };
      }
      return { value: string };
    }
  }
}
