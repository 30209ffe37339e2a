export function buildCli(o: { outdir: string; quiet?: boolean; logLevel?: string }): Promise<{ inputs: Record<string, unknown> }>;
export function escapeNonAscii(text: string): string;
export const cjsPrologue: { js: string };
export const LAZY_BUILTINS: string[];
export function lazyBuiltins(text: string): string;
