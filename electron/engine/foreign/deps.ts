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
