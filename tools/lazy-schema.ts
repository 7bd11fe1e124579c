/**
 * A schema (or any object) built the first time it is used rather than when its module loads.
 *
 * Why: the library's own zod schemas (run events, messages, plan results, retry hints, policy
 * decisions: some 450 zod objects) cost about half of a cold `import('toolwarden')` when built at
 * the top of their modules, most of it zod's own code running cold for the first time, and an app
 * that never validates a run event never needs them (docs/packaging.md §Cost, issue 39 item 3).
 * Wrapped here, a module's `export const FooSchema = lazySchema(() => z.object({ … }))` keeps its
 * type (`z.infer<typeof FooSchema>` and every zod method work as on the schema itself) and builds
 * on the first property read: `FooSchema.parse(x)`, `FooSchema.shape`, `FooSchema.optional()`,
 * `x instanceof z.ZodType` (zod answers that from the schema's `_zod` traits), or when zod reads it
 * inside another schema. Schemas that use it inside their own `lazySchema` builder stay lazy with
 * them; one read at a module's top level builds it there.
 *
 * The value is a `Proxy` over the built schema: reads, `in`, keys, descriptors and the prototype are
 * the schema's, so zod's methods (bound to the built schema when zod constructs it) run on the real
 * object. What differs is identity: `lazySchema(f) !== f()`; use the wrapper everywhere.
 *
 * @param build Makes the schema; called once, on first use. An error it throws is thrown at that
 *   use (and again at the next, which calls `build` again).
 * @returns An object that behaves as `build()`'s result.
 */
export function lazySchema<T extends object>(build: () => T): T {
  return lazyObject(build);
}

/**
 * Any object built on first use, as {@link lazySchema} builds a schema: a `Proxy` whose reads, `in`,
 * keys, descriptors and prototype are the built object's (docs/packaging.md §Cost; the
 * OpenTelemetry API's singletons in plugins/otel-api.ts).
 */
export function lazyObject<T extends object>(build: () => T): T {
  let built: T | undefined;
  const real = (): T => {
    built ??= build();
    return built;
  };
  // The target stays an empty, extensible object: every trap answers from the built schema, and a
  // descriptor reported for a property the target lacks must be configurable (Proxy invariants).
  return new Proxy(Object.create(null) as T, {
    get: (_target, key) => Reflect.get(real(), key),
    set: (_target, key, value) => Reflect.set(real(), key, value),
    has: (_target, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
    defineProperty: (_target, key, descriptor) => Reflect.defineProperty(real(), key, descriptor),
    deleteProperty: (_target, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}
