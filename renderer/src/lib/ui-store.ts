/**
 * Every UI store of the renderer is made here: zustand's `create`, plus a registry of the stores made, so a test can
 * put every store back to its initial state. The component tests share one module graph per worker (vitest
 * `isolate: false`: a fresh graph per file cost four times the tests' own time), so a view, a selection or a layout
 * left by one file would otherwise be the next file's starting screen. Lint keeps `create` from 'zustand' out of
 * every other file.
 */
import { create, type StateCreator, type StoreApi } from 'zustand';

const made = new Set<StoreApi<unknown>>();

function track<S>(store: S): S {
  made.add(store as StoreApi<unknown>);
  return store;
}

type Create = typeof create;
type Initializer = StateCreator<unknown, [], []>;

/** zustand's `create`, both its forms (`createUiStore(init)` and `createUiStore<T>()(init)`) */
export const createUiStore = ((initializer?: Initializer) =>
  initializer === undefined ? (init: Initializer) => track(create(init)) : track(create(initializer))) as unknown as Create;

/** every store made so far back at its initial state (tests only) */
export function resetUiStores(): void {
  for (const store of made) store.setState(store.getInitialState(), true);
}
