export function freshBuild(root: string, cacheDir: string): string | undefined;
export function rebuild(
  root: string,
  cacheDir: string,
  build: (outdir: string) => Promise<{ inputs: Record<string, unknown> }>,
  alsoWatch: string[],
): Promise<string>;
export function packageJsonOf(file: string): string;
/** the build's entry file name (a CommonJS script run by bundle-loader.mjs) */
export const ENTRY: string;
