/**
 * A zod schema built on first use. Building zod 4 schemas is not free (each `.default()`, `.int()`, `.strictObject`
 * clones definitions), and the modules that declare them are loaded by every door that opens an engine: the CLI's
 * `pods` paid about a tenth of its start-up building schemas for configs it never parses. The stand-in forwards every
 * read to the schema, built once, so it is used (parsed with, nested in another schema, typed with `z.output<typeof
 * …>`) exactly as the schema itself would be.
 */
export function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const schema = () => (built ??= build());
  // forwarding reads only: a schema is never enumerated or redefined, and reporting its own (non-configurable)
  // properties through a stand-in target would break the proxy's invariants
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(schema(), key),
    has: (_, key) => Reflect.has(schema(), key),
    set: (_, key, value) => Reflect.set(schema(), key, value),
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
  });
}
