/**
 * Single-use tokens for streaming requests, as kubelet's request cache (k8s.io/kubelet pkg/cri/streaming
 * request_cache.go): a token is 8 URL-safe base64 characters from crypto random bytes, lives one minute, is removed
 * when it is used, and at most 1000 may be outstanding (then the RPC fails instead of evicting live tokens).
 */
import { randomBytes } from 'node:crypto';
import { PodscopeError } from '../../../shared/domain/errors';

export const TOKEN_TTL_MS = 60_000;
export const MAX_IN_FLIGHT = 1000;
const TOKEN_LEN = 8;

export interface TokenCacheOptions {
  ttlMs?: number;
  maxInFlight?: number;
  /** injectable clock (ms), so expiry is tested without waiting */
  now?: () => number;
}

export class TokenCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();
  private readonly ttlMs: number;
  private readonly maxInFlight: number;
  private readonly now: () => number;

  constructor(options: TokenCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? TOKEN_TTL_MS;
    this.maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
    this.now = options.now ?? Date.now;
  }

  insert(value: T): string {
    this.gc();
    if (this.entries.size >= this.maxInFlight) {
      // kubelet answers this with 429 TooManyRequests; on the RPC it is Unavailable (retry later)
      throw new PodscopeError('Unavailable', `maximum number of in-flight streaming requests exceeded (${this.maxInFlight})`);
    }
    let token: string;
    do
      token = randomBytes(Math.ceil((TOKEN_LEN * 6) / 8))
        .toString('base64url')
        .slice(0, TOKEN_LEN);
    while (this.entries.has(token));
    this.entries.set(token, { value, expiresAt: this.now() + this.ttlMs });
    return token;
  }

  /** removes the token and returns its request; undefined when unknown, already used or expired */
  consume(token: string): T | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    this.entries.delete(token);
    return this.now() > entry.expiresAt ? undefined : entry.value;
  }

  get size(): number {
    this.gc();
    return this.entries.size;
  }

  private gc(): void {
    const now = this.now();
    for (const [token, entry] of this.entries) if (now > entry.expiresAt) this.entries.delete(token);
  }
}
