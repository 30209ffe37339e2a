/**
 * Error model shared by the engine, every front door (IPC, WebSocket, CLI, CRI) and the renderer.
 * A code is stable and maps to one gRPC status (see electron/cri) and one CLI exit code; the message is
 * for a person; details carry structured context (e.g. a CNI plugin's code/msg/details, a command's stderr).
 */
export const ERROR_CODES = [
  'InvalidArgument',
  'NotFound',
  'AlreadyExists',
  'FailedPrecondition',
  'CniError',
  'RuntimeError',
  'Unavailable',
  'DeadlineExceeded',
  'Canceled',
  'Unimplemented',
  'Internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface SerializedError {
  code: ErrorCode;
  message: string;
  details?: unknown;
  cause?: SerializedError;
}

export class PodscopeError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;
  constructor(code: ErrorCode, message: string, options?: { details?: unknown; cause?: unknown }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = `PodscopeError(${code})`;
    this.code = code;
    if (options?.details !== undefined) this.details = options.details;
  }
}

/**
 * The one "not supported by this endpoint" error: what was asked for exists, but not where it was asked (a CRI
 * runtime has no call for it, an engine was built without that part). Its code is Unimplemented, so it is mapped
 * once with every other code (gRPC UNIMPLEMENTED in electron/cri/errors.ts, the CLI's exit code in
 * electron/cli/exit-codes.ts); `feature` names what was asked for and travels in details, so it survives IPC and
 * the CRI trailer. Where a flag of EndpointCapabilities says the same, the doors and the renderer read the flag
 * first and this error is what a caller that did not gets.
 */
export class NotSupportedError extends PodscopeError {
  declare readonly code: 'Unimplemented';
  /** what was asked for, e.g. "streaming", "images.load", "measurements", "lab" */
  readonly feature: string;
  constructor(feature: string, message: string, options?: { details?: Record<string, unknown>; cause?: unknown }) {
    super('Unimplemented', message, { details: { ...options?.details, feature }, cause: options?.cause });
    this.feature = feature;
  }
}

export const notSupported = (feature: string, message: string, details?: Record<string, unknown>) =>
  new NotSupportedError(feature, message, details ? { details } : undefined);

export function isNotSupported(e: unknown): e is PodscopeError {
  return hasCode(e, 'Unimplemented');
}

/**
 * A typed error from a code and a message, as the wire forms (IPC reply, gRPC status) are turned back: an
 * Unimplemented one comes back as a NotSupportedError.
 */
export function errorOf(code: ErrorCode, message: string, options?: { details?: unknown; cause?: unknown }): PodscopeError {
  if (code !== 'Unimplemented') return new PodscopeError(code, message, options);
  const details = options?.details && typeof options.details === 'object' ? (options.details as Record<string, unknown>) : {};
  const { feature, ...rest } = details;
  return new NotSupportedError(typeof feature === 'string' ? feature : 'unknown', message, { details: rest, cause: options?.cause });
}

export const invalidArgument = (message: string, details?: unknown) => new PodscopeError('InvalidArgument', message, { details });
export const notFound = (message: string, details?: unknown) => new PodscopeError('NotFound', message, { details });

export function isPodscopeError(e: unknown): e is PodscopeError {
  return e instanceof PodscopeError;
}

export function hasCode(e: unknown, code: ErrorCode): boolean {
  return isPodscopeError(e) && e.code === code;
}

function isErrorCode(x: unknown): x is ErrorCode {
  return typeof x === 'string' && (ERROR_CODES as readonly string[]).includes(x);
}

/** Turns anything thrown into the wire form; unknown errors become Internal and keep their message. */
export function serializeError(e: unknown, depth = 0): SerializedError {
  if (isPodscopeError(e)) {
    const out: SerializedError = { code: e.code, message: e.message };
    if (e.details !== undefined) out.details = jsonSafe(e.details);
    if (e.cause !== undefined && depth < 4) out.cause = serializeError(e.cause, depth + 1);
    return out;
  }
  if (e instanceof Error) {
    const out: SerializedError = { code: 'Internal', message: e.message || e.name };
    if (e.cause !== undefined && depth < 4) out.cause = serializeError(e.cause, depth + 1);
    return out;
  }
  return { code: 'Internal', message: typeof e === 'string' ? e : (JSON.stringify(e) ?? String(e)) };
}

/** Rebuilds a typed error from the wire form; a malformed payload still yields an Internal error, never a crash. */
export function deserializeError(raw: unknown): PodscopeError {
  if (raw && typeof raw === 'object') {
    const r = raw as Record<string, unknown>;
    const code = isErrorCode(r.code) ? r.code : 'Internal';
    const message = typeof r.message === 'string' ? r.message : 'unknown error';
    const cause = r.cause !== undefined ? deserializeError(r.cause) : undefined;
    return errorOf(code, message, { details: r.details, cause });
  }
  return new PodscopeError('Internal', typeof raw === 'string' ? raw : 'unknown error');
}

function jsonSafe(v: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)));
  } catch {
    return String(v);
  }
}
