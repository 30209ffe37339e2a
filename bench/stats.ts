/** Percentiles and a fixed-width report; the bench prints figures and asserts nothing. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export class Samples {
  private readonly byKey = new Map<string, number[]>();

  add(key: string, ms: number): void {
    const list = this.byKey.get(key) ?? [];
    list.push(ms);
    this.byKey.set(key, list);
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  get(key: string): number[] {
    return this.byKey.get(key) ?? [];
  }
}

export const fmt = (ms: number) => (Number.isNaN(ms) ? '-' : ms.toFixed(1));

export function row(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
}
