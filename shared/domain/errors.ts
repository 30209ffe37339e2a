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
    return new PodscopeError(code, message, { details: r.details, cause });
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
