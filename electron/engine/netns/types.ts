/** Network namespaces pinned by a bind mount on a file, as containerd's pkg/netns does. */
export interface NetnsManager {
  /** the directory holding the pinned namespaces (default /var/run/netns) */
  readonly dir: string;
  /** a fresh `<dir>/cni-<uuid>` path, so a caller can record it before creating (a crash then leaks nothing) */
  newPath(): string;
  /** Creates a new namespace pinned at `path` (default: a fresh one) and returns the path. */
  create(signal?: AbortSignal, path?: string): Promise<string>;
  /** Lazy-unmounts and deletes the file. Idempotent: a missing path is a success. */
  remove(path: string): Promise<void>;
  /** True when the file is gone or is not a namespace mount any more (then the stale file is deleted). */
  isClosed(path: string): Promise<boolean>;
  /** Every pinned `cni-*` namespace under dir (for start-up reconciliation and leak checks). */
  list(): Promise<string[]>;
}
