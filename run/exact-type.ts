import type { z } from 'zod';

/**
 * Whether `A` and `B` are the same type: not only assignable to each other (which an optional
 * property one of them lacks would pass) but identical, as tsc compares types it must not widen.
 */
export type SameType<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/**
 * A schema typed with its written output type `T` (an interface) once tsc has checked that the
 * schema's inferred output is exactly `T`. Declared as `z.ZodType<T>`, a schema's declaration
 * names `T` instead of printing zod's inferred object shapes (issue 28 item 4), and `parse`
 * still returns a `T`; a schema change the written type does not follow fails to compile.
 */
export function exactSchema<T>() {
  return <S extends z.ZodType>(
    schema: S &
      (SameType<z.output<S>, T> extends true
        ? unknown
        : "The schema's output is not exactly its written type: update one of them"),
  ): z.ZodType<T> => schema as unknown as z.ZodType<T>;
}
