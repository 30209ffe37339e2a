export function buildCli(o: { outdir: string; quiet?: boolean; logLevel?: string }): Promise<{ inputs: Record<string, unknown> }>;
export function escapeNonAscii(text: string): string;
