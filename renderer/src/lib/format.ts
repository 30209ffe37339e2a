import { formatBitsPerSecond } from '../../../shared/domain/bandwidth';
import { formatBytes } from '../../../shared/domain/measure';

/** Small display helpers: ages like kubectl, short ids like crictl. */
export function age(fromIso: string, now = Date.now()): string {
  const s = Math.max(0, Math.floor((now - Date.parse(fromIso)) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  const d = Math.floor(h / 24);
  return `${d}d${h % 24 ? `${h % 24}h` : ''}`;
}

/** crictl truncates ids to 13 characters. */
export const shortId = (id: string) => id.slice(0, 13);

export function ms(n: number): string {
  if (n < 1) return `${n.toFixed(2)} ms`;
  if (n < 100) return `${n.toFixed(1)} ms`;
  if (n < 10_000) return `${Math.round(n)} ms`;
  return `${(n / 1000).toFixed(1)} s`;
}

export function dateTime(iso: string | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { hour12: false });
}

export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * Units, one way everywhere: rates in bit/s with SI prefixes (as tc and the bandwidth annotations mean them),
 * sizes in bytes with SI prefixes. A rate the kernel reports in bytes per second (tc's JSON) goes through
 * byteRateAsBits, never shown as bytes/s.
 */
export function bitRate(bitsPerSecond: number | bigint | undefined): string | undefined {
  if (bitsPerSecond === undefined) return undefined;
  const n = typeof bitsPerSecond === 'bigint' ? bitsPerSecond : BigInt(Math.round(bitsPerSecond));
  return formatBitsPerSecond(n);
}

export const byteRateAsBits = (bytesPerSecond: number): string => bitRate(bytesPerSecond * 8)!;

/** 512 ⇒ "512 B", 12500 ⇒ "12.5 kB", 193_000_000 ⇒ "193 MB": the one size format of the CLI and the app (shared/). */
export const byteSize = formatBytes;
