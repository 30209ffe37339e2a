/**
 * Pod bandwidth annotations, parsed exactly as containerd does (internal/cri/bandwidth/utils.go):
 * the value is a Kubernetes resource quantity (apimachinery grammar) meaning bits per second, rounded up to an
 * integer, and must lie within [1k, 1P]. Shared by the engine and the create form so both agree by construction.
 */
export const INGRESS_ANNOTATION = 'kubernetes.io/ingress-bandwidth';
export const EGRESS_ANNOTATION = 'kubernetes.io/egress-bandwidth';
/** containerd sends the largest uint32 as burst for each direction that has a rate. */
export const DEFAULT_BURST_BITS = 4294967295;
export const MIN_BANDWIDTH = 1000n; // 1k
export const MAX_BANDWIDTH = 10n ** 15n; // 1P

export const QUANTITY_REGEX_TEXT = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
/**
 * QUANTITY_REGEX_TEXT matched without backtracking. As a JS RegExp it is quadratic on a failing input (digits can
 * belong to either group, so "111…1x" tries every split): a 110 KiB annotation of digits kept the event loop busy
 * for seconds and every CRI call on the daemon waited (Go's RE2 is linear). Splitting after the longest
 * `[+-]?[0-9.]+` prefix gives the same answer: a shorter numeric part leaves digits followed by the rest, and the
 * suffix pattern can only take those digits at its end, where the rest (which starts with another character) cannot
 * follow.
 */
export function splitQuantity(text: string): [numeric: string, suffix: string] | undefined {
  let i = text.startsWith('+') || text.startsWith('-') ? 1 : 0;
  const start = i;
  while (i < text.length && /[0-9.]/.test(text[i]!)) i++;
  if (i === start) return undefined;
  const suffix = text.slice(i);
  return /^[eEinumkKMGTP]*[-+]?[0-9]*$/.test(suffix) ? [text.slice(0, i), suffix] : undefined;
}

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

export class QuantityError extends Error {}

/** An exact rational value: numerator / denominator, denominator > 0. */
interface Rational {
  num: bigint;
  den: bigint;
}

function parseRational(text: string): Rational {
  // apimachinery scans rather than matches: a bare sign or dot reads as zero ("unreasonably small", not a format error)
  if (/^[+-]?\.?$/.test(text) && text !== '') return { num: 0n, den: 1n };
  const m = splitQuantity(text);
  if (!m) throw new QuantityError(`quantities must match the regular expression '${QUANTITY_REGEX_TEXT}'`);
  const [numeric, suffix] = m;
  const nm = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(numeric);
  if (!nm) throw new QuantityError(`quantities must match the regular expression '${QUANTITY_REGEX_TEXT}'`); // e.g. 1.2.3
  if (nm[2] === '' && (nm[3] ?? '') === '') return { num: 0n, den: 1n };
  const negative = nm[1] === '-';
  const whole = nm[2] || '0';
  const frac = nm[3] ?? '';
  let num = BigInt(whole + frac) * (negative ? -1n : 1n);
  let den = 10n ** BigInt(frac.length);
  if (suffix in DECIMAL_SUFFIX) {
    const e = DECIMAL_SUFFIX[suffix]!;
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  } else if (suffix in BINARY_SUFFIX) {
    num *= 2n ** BigInt(BINARY_SUFFIX[suffix]!);
  } else {
    const em = /^[eE]([+-]?\d+)$/.exec(suffix);
    if (!em) throw new QuantityError("unable to parse quantity's suffix");
    // Past this bound every non-zero value is far outside [1k, 1P] either way; clamping keeps 1e999999999 cheap.
    const bound = 1000 + numeric.length;
    const e = Math.max(-bound, Math.min(bound, Number(em[1])));
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  }
  return { num, den };
}

/** Integer value rounded away from zero, as apimachinery's Quantity.Value() does (999.1 ⇒ 1000). */
export function parseQuantity(text: string): bigint {
  const { num, den } = parseRational(text);
  const q = num / den;
  if (q * den === num) return q;
  return num > 0n ? q + 1n : q - 1n;
}

export type BandwidthDirection = 'ingress' | 'egress';

export interface ParsedBandwidthValue {
  annotation: string;
  raw: string;
  /** bits per second, as a decimal string (can exceed 2^53 before validation) */
  bitsPerSecond?: string;
  human?: string;
  error?: string;
}

/** Validates one bandwidth value with containerd's rules and messages. */
export function parseBandwidthValue(raw: string): { bits: bigint } | { error: string } {
  let bits: bigint;
  try {
    bits = parseQuantity(raw);
  } catch (e) {
    return { error: (e as Error).message };
  }
  if (bits < MIN_BANDWIDTH) return { error: 'resource is unreasonably small (< 1kbit)' };
  if (bits > MAX_BANDWIDTH) return { error: 'resource is unreasonably large (> 1Pbit)' };
  return { bits };
}

/** The CNI `bandwidth` capability in its conventional camelCase form (rates in bit/s, bursts in bits). */
export interface CniBandwidth {
  ingressRate: number;
  ingressBurst: number;
  egressRate: number;
  egressBurst: number;
}

export interface BandwidthAnalysis {
  ingress?: ParsedBandwidthValue;
  egress?: ParsedBandwidthValue;
  /** undefined when no annotation is present or when any is invalid */
  capability?: CniBandwidth;
  /** the first validation error, prefixed by its annotation, as RunPodSandbox reports it */
  error?: string;
}

export function analyzeBandwidth(annotations: Record<string, string> | undefined): BandwidthAnalysis {
  const out: BandwidthAnalysis = {};
  const cap: CniBandwidth = { ingressRate: 0, ingressBurst: 0, egressRate: 0, egressBurst: 0 };
  let any = false;
  for (const [dir, key] of [
    ['ingress', INGRESS_ANNOTATION],
    ['egress', EGRESS_ANNOTATION],
  ] as const) {
    const raw = annotations?.[key];
    if (raw === undefined) continue;
    any = true;
    const parsed = parseBandwidthValue(raw);
    const view: ParsedBandwidthValue = { annotation: key, raw };
    if ('error' in parsed) {
      view.error = parsed.error;
      out.error ??= `${key} ${JSON.stringify(raw)}: ${parsed.error}`;
    } else {
      view.bitsPerSecond = parsed.bits.toString();
      view.human = formatBitsPerSecond(parsed.bits);
      if (dir === 'ingress') {
        cap.ingressRate = Number(parsed.bits);
        cap.ingressBurst = DEFAULT_BURST_BITS;
      } else {
        cap.egressRate = Number(parsed.bits);
        cap.egressBurst = DEFAULT_BURST_BITS;
      }
    }
    out[dir] = view;
  }
  if (any && !out.error) out.capability = cap;
  return out;
}

const UNITS: Array<[bigint, string]> = [
  [10n ** 15n, 'Pbit/s'],
  [10n ** 12n, 'Tbit/s'],
  [10n ** 9n, 'Gbit/s'],
  [10n ** 6n, 'Mbit/s'],
  [10n ** 3n, 'kbit/s'],
];

/** 10000000 ⇒ "10 Mbit/s", 1048576 ⇒ "1.049 Mbit/s" (decimal units, as tc reports rates). */
export function formatBitsPerSecond(bits: bigint): string {
  for (const [scale, unit] of UNITS) {
    if (bits >= scale) {
      const whole = bits / scale;
      const milli = ((bits % scale) * 1000n) / scale;
      const frac = milli === 0n ? '' : `.${milli.toString().padStart(3, '0').replace(/0+$/, '')}`;
      return `${whole}${frac} ${unit}`;
    }
  }
  return `${bits} bit/s`;
}

export const BANDWIDTH_UNITS = ['k', 'M', 'G', 'T', 'Ki', 'Mi', 'Gi', 'Ti'] as const;
export type BandwidthUnit = (typeof BANDWIDTH_UNITS)[number];
/** Form helper: a number and a unit suffix become the annotation text, e.g. (10, 'M') ⇒ "10M". */
export function toQuantity(value: string, unit: BandwidthUnit | ''): string {
  return `${value.trim()}${unit}`;
}

/**
 * A rate a user types (a CLI flag, the lab's capability form): the same Kubernetes quantity in bit/s as the
 * annotations ("10M", "1Gi", "500k", "2000000"), within the same bounds, or 0 for "no limit" (the bandwidth plugin's
 * meaning of a zero rate). One parser, so a value accepted in one place is accepted in every other.
 */
export function parseRateInput(raw: string): { bitsPerSecond: number } | { error: string } {
  const text = raw.trim();
  if (/^0+$/.test(text)) return { bitsPerSecond: 0 };
  const parsed = parseBandwidthValue(text);
  if ('error' in parsed) return { error: `${JSON.stringify(raw)}: ${parsed.error}` };
  return { bitsPerSecond: Number(parsed.bits) };
}
