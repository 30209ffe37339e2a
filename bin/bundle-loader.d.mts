export interface LoadedBundle {
  /** what the bundle's module.exports holds */
  exports: Record<string, unknown>;
  /** what became of the code cache: none, made from another bundle, rejected by V8, or used */
  cache: 'used' | 'none' | 'stale' | 'rejected';
  /** after a run of `verb`: writes the cache when it lacks what this run compiled; true when it wrote it */
  keep(verb: string): boolean;
}
export function loadBundle(file: string, cacheFile?: string): LoadedBundle;
