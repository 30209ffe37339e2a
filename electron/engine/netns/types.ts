/** Network namespaces pinned by a bind mount on a file, as containerd's pkg/netns does. */
export interface NetnsManager {
  /** the directory holding the pinned namespaces (default /var/run/netns) */
  readonly dir: string;
  /** Creates a new namespace pinned at `<dir>/cni-<uuid>` and returns its path. */
  create(signal?: AbortSignal): Promise<string>;
  /** Lazy-unmounts and deletes the file. Idempotent: a missing path is a success. */
  remove(path: string): Promise<void>;
  /** True when the file is gone or is not a namespace mount any more (then the stale file is deleted). */
  isClosed(path: string): Promise<boolean>;
  /** Every pinned `cni-*` namespace under dir (for start-up reconciliation and leak checks). */
  list(): Promise<string[]>;
}
