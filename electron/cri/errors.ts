/**
 * The ONE mapping between Podscope errors and gRPC status codes (docs/semantics.md#grpc-errors, containerd's errgrpc.ToGRPC):
 * classified codes keep their gRPC twin, everything unclassified (CNI and runc failures, bugs) is UNKNOWN with the
 * message kept. A Podscope server also attaches the full serialized error as binary trailer metadata so a Podscope
 * client gets back the exact code (CniError vs RuntimeError), details and cause chain; foreign peers ignore it.
 */
import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { z } from 'zod';
import {
  ERROR_CODES,
  PodscopeError,
  serializeError,
  deserializeError,
  errorOf,
  type ErrorCode,
  type SerializedError,
} from '../../shared/domain/errors';

export const PODSCOPE_ERROR_METADATA_KEY = 'podscope-error-bin';

const CODE_TO_GRPC: Partial<Record<ErrorCode, GrpcStatus>> = {
  NotFound: GrpcStatus.NOT_FOUND,
  AlreadyExists: GrpcStatus.ALREADY_EXISTS,
  InvalidArgument: GrpcStatus.INVALID_ARGUMENT,
  FailedPrecondition: GrpcStatus.FAILED_PRECONDITION,
  Unavailable: GrpcStatus.UNAVAILABLE,
  Unimplemented: GrpcStatus.UNIMPLEMENTED,
  DeadlineExceeded: GrpcStatus.DEADLINE_EXCEEDED,
  Canceled: GrpcStatus.CANCELLED,
  // CniError, RuntimeError, Internal: deliberately absent ⇒ UNKNOWN, as containerd does for unclassified errors.
};

export function grpcCodeFor(code: ErrorCode): GrpcStatus {
  return CODE_TO_GRPC[code] ?? GrpcStatus.UNKNOWN;
}

/** The most the `podscope-error-bin` trailer may carry (bytes of JSON); grpc-js's default metadata limit is 8 KiB. */
export const MAX_ERROR_TRAILER_BYTES = 6 * 1024;
/** Longest message (and cause message) taken from a trailer. */
export const MAX_ERROR_MESSAGE_CHARS = 2048;
/** Deepest cause chain taken from a trailer (serializeError writes at most 4 levels). */
const MAX_CAUSE_DEPTH = 4;

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The trailer form of an error, shrunk to fit MAX_ERROR_TRAILER_BYTES: details and causes go first, then length. */
function trailerJson(serialized: SerializedError): string {
  const clip = (x: SerializedError, depth: number): SerializedError => ({
    ...x,
    message: truncate(x.message, MAX_ERROR_MESSAGE_CHARS),
    ...(x.cause && { cause: depth < MAX_CAUSE_DEPTH ? clip(x.cause, depth + 1) : undefined }),
  });
  const attempts: SerializedError[] = [clip(serialized, 0)];
  attempts.push({ ...attempts[0]!, cause: undefined });
  attempts.push({ code: serialized.code, message: truncate(serialized.message, 1024) });
  for (const a of attempts) {
    const json = JSON.stringify(a);
    if (Buffer.byteLength(json) <= MAX_ERROR_TRAILER_BYTES) return json;
  }
  return JSON.stringify({ code: serialized.code, message: truncate(serialized.message, 256) });
}

/**
 * Most bytes (UTF-8) of `grpc-message`. The message travels in the trailers, percent-encoded (up to 3× its bytes),
 * and a trailer block larger than the client's SETTINGS_MAX_HEADER_LIST_SIZE is never sent: a RunPodSandbox
 * refused for a 110 KiB hostname, whose message quoted it, was never answered and the client saw
 * DEADLINE_EXCEEDED. Bounded, the status plus the podscope-error-bin trailer stay well under 16 KiB.
 */
export const MAX_GRPC_MESSAGE_BYTES = 2048;

/** Cuts a message to at most `max` UTF-8 bytes on a character boundary, marking the cut. */
export function clipMessage(message: string, max = MAX_GRPC_MESSAGE_BYTES): string {
  if (Buffer.byteLength(message) <= max) return message;
  const marker = `… (${Buffer.byteLength(message)} bytes, cut)`;
  let out = Buffer.from(message)
    .subarray(0, max - Buffer.byteLength(marker))
    .toString('utf8');
  if (out.endsWith('\ufffd')) out = out.slice(0, -1); // a character cut in half
  return out + marker;
}

/** Anything thrown by the engine or an adapter ⇒ the status a gRPC handler reports. */
export function toGrpcStatus(e: unknown): Partial<StatusObject> {
  const serialized = serializeError(e);
  const metadata = new Metadata();
  metadata.set(PODSCOPE_ERROR_METADATA_KEY, Buffer.from(trailerJson(serialized)));
  return { code: grpcCodeFor(serialized.code), details: clipMessage(serialized.message), metadata };
}

const GRPC_TO_CODE: Partial<Record<number, ErrorCode>> = {
  [GrpcStatus.NOT_FOUND]: 'NotFound',
  [GrpcStatus.ALREADY_EXISTS]: 'AlreadyExists',
  [GrpcStatus.INVALID_ARGUMENT]: 'InvalidArgument',
  [GrpcStatus.FAILED_PRECONDITION]: 'FailedPrecondition',
  [GrpcStatus.UNAVAILABLE]: 'Unavailable',
  [GrpcStatus.UNIMPLEMENTED]: 'Unimplemented',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'DeadlineExceeded',
  [GrpcStatus.CANCELLED]: 'Canceled',
  // UNKNOWN is what runtimes answer for their own failures (CNI, OCI runtime): the runtime failed, not the transport.
  [GrpcStatus.UNKNOWN]: 'RuntimeError',
};

export function isServiceError(e: unknown): e is ServiceError {
  return e instanceof Error && typeof (e as Partial<ServiceError>).code === 'number' && 'metadata' in e;
}

/** Trailer shape: any peer can send it, so only known codes, bounded messages and a bounded cause chain. */
const TrailerSchema: z.ZodType<SerializedError> = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string().transform((m) => truncate(m, MAX_ERROR_MESSAGE_CHARS)),
  details: z.unknown().optional(),
  get cause() {
    return TrailerSchema.optional();
  },
});

const causeDepth = (x: SerializedError): number => (x.cause ? 1 + causeDepth(x.cause) : 0);

/**
 * The exact Podscope error a peer attached, or undefined to use the plain gRPC mapping: the trailer is ignored when
 * it is too large, not JSON, not the SerializedError shape with a known code, nests causes too deep, or claims a
 * code whose gRPC status is not the one the call actually failed with (a peer cannot turn, say, an UNAVAILABLE into
 * a NotFound through it).
 */
function trailerError(e: ServiceError): PodscopeError | undefined {
  const values = e.metadata?.get(PODSCOPE_ERROR_METADATA_KEY) ?? [];
  if (values.length !== 1) return undefined;
  const raw = values[0]!;
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw, 'utf8');
  if (bytes.length > MAX_ERROR_TRAILER_BYTES) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  // depth first: a deeply nested document must not reach the recursive schema
  if (jsonDepth(parsed) > 4 * (MAX_CAUSE_DEPTH + 2) + 16) return undefined;
  const r = TrailerSchema.safeParse(parsed);
  if (!r.success || causeDepth(r.data) > MAX_CAUSE_DEPTH || grpcCodeFor(r.data.code) !== e.code) return undefined;
  return deserializeError(r.data);
}

function jsonDepth(v: unknown, depth = 0): number {
  if (depth > 64 || v === null || typeof v !== 'object') return depth;
  let max = depth;
  for (const x of Object.values(v as object)) max = Math.max(max, jsonDepth(x, depth + 1));
  return max;
}

/**
 * A failed client call ⇒ PodscopeError. `where` names the endpoint (e.g. "unix:///run/containerd/containerd.sock")
 * so an unreachable socket says which one.
 */
/**
 * grpc-js ends an unreachable channel's text with "Resolution note: <note>" even when the note is empty
 * ("… connect ECONNREFUSED /x.sock. Resolution note: "): drop the empty label so the message ends with the cause.
 */
export function cleanGrpcDetails(details: string): string {
  return details.replace(/\s*Resolution note:\s*$/, '').trim();
}

export function fromGrpcError(e: unknown, where: string): PodscopeError {
  if (!isServiceError(e))
    return e instanceof PodscopeError ? e : new PodscopeError('Internal', `${where}: ${String((e as Error)?.message ?? e)}`, { cause: e });
  const fromTrailer = trailerError(e);
  if (fromTrailer) return fromTrailer;
  const code = GRPC_TO_CODE[e.code] ?? 'Internal';
  if (code === 'Unavailable') {
    return new PodscopeError('Unavailable', `CRI endpoint ${where} is unavailable: ${cleanGrpcDetails(e.details || e.message)}`, {
      details: { grpcCode: e.code },
    });
  }
  return errorOf(code, e.details || e.message, { details: { grpcCode: e.code, endpoint: where } });
}
