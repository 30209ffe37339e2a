/**
 * What the foreign-pod resolver needs: the node's files, read-only. service/ fills it with the real reader
 * (node-files.ts); tests with testkit/fakes/fake-node-files.ts.
 */

/** The few reads the resolver makes on the node; none of them writes. */
export interface NodeFiles {
  /** the entries of a directory, or undefined when it cannot be read (missing, not a directory, no permission) */
  readDir(dir: string): Promise<string[] | undefined>;
  /** a file's text, or undefined when it cannot be read */
  readText(file: string): Promise<string | undefined>;
  /** the path exists from this process's mount namespace (a netns bind mount, a /proc entry) */
  exists(path: string): Promise<boolean>;
}

/**
 * Where a runtime that is not in this process's namespaces lives (a kind node on this machine), as this process
 * reaches it. Filled by the composition root from node discovery; absent for a runtime in the host's namespaces.
 */
export interface ForeignNode {
  /** the node's name (its UTS hostname) */
  name: string;
  /** the node's network namespace (/proc/<runtime pid>/ns/net); undefined: the host's */
  netnsPath?: string;
  /** the node's root (/proc/<runtime pid>/root); undefined: the runtime shares this mount namespace */
  root?: string;
  /** the host's pid of a pid the runtime reports (its own pid namespace's); undefined: not seen */
  hostPid?(reported: number): number | undefined;
  /** its addresses (no prefix): where its host ports are reached from other nodes */
  addresses: string[];
  /** its pod subnets (CIDR), where known: which node a pod address belongs to, and which route should lead there */
  podSubnets: string[];
}

/**
 * A path as the runtime wrote it, as this process reaches it through the node's root. An absolute symlink met under
 * /proc/<pid>/root resolves against the reader's root, so /var/run (a symlink to /run on Debian and in kind's image)
 * is replaced by /run before the root is put in front.
 */
export function throughRoot(root: string | undefined, path: string): string {
  if (root === undefined) return path;
  return `${root}${path.replace(/^\/var\/run(?=\/|$)/, '/run')}`;
}
