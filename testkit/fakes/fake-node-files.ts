/**
 * In-memory NodeFiles for the foreign-pod resolver: the node's files as a map of path → text, plus paths that only
 * exist (a netns bind mount, /proc/<pid>/ns/net). Directories are whatever the file paths imply. Every read is
 * recorded, so a test can say where the resolver looked.
 */
import type { NodeFiles } from '../../electron/engine/foreign/deps';

export class FakeNodeFiles implements NodeFiles {
  readonly files = new Map<string, string>();
  readonly present = new Set<string>();
  readonly unreadableDirs = new Set<string>();
  readonly looked: string[] = [];

  constructor(files: Record<string, string | object> = {}, present: string[] = []) {
    for (const [p, t] of Object.entries(files)) this.files.set(p, typeof t === 'string' ? t : JSON.stringify(t));
    for (const p of present) this.present.add(p);
  }

  async readDir(dir: string): Promise<string[] | undefined> {
    this.looked.push(dir);
    if (this.unreadableDirs.has(dir)) return undefined;
    const prefix = `${dir.replace(/\/+$/, '')}/`;
    const names = [...this.files.keys()].filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length).split('/')[0]!);
    return names.length ? [...new Set(names)] : undefined;
  }

  async readText(file: string): Promise<string | undefined> {
    this.looked.push(file);
    return this.files.get(file);
  }

  async exists(path: string): Promise<boolean> {
    this.looked.push(path);
    return this.present.has(path) || this.files.has(path);
  }
}
