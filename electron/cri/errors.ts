/**
 * The ONE mapping between Podscope errors and gRPC status codes (FACTS C14, containerd's errgrpc.ToGRPC):
 * classified codes keep their gRPC twin, everything unclassified (CNI and runc failures, bugs) is UNKNOWN with the
 * message kept. A Podscope server also attaches the full serialized error as binary trailer metadata so a Podscope
 * client gets back the exact code (CniError vs RuntimeError), details and cause chain; foreign peers ignore it.
 */
import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { PodscopeError, serializeError, deserializeError, type ErrorCode } from '../../shared/domain/errors';

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

/** Anything thrown by the engine or an adapter ⇒ the status a gRPC handler reports. */
export function toGrpcStatus(e: unknown): Partial<StatusObject> {
  const serialized = serializeError(e);
  const metadata = new Metadata();
  metadata.set(PODSCOPE_ERROR_METADATA_KEY, Buffer.from(JSON.stringify(serialized)));
  return { code: grpcCodeFor(serialized.code), details: serialized.message, metadata };
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

/**
 * A failed client call ⇒ PodscopeError. `where` names the endpoint (e.g. "unix:///run/containerd/containerd.sock")
 * so an unreachable socket says which one.
 */
export function fromGrpcError(e: unknown, where: string): PodscopeError {
  if (!isServiceError(e)) return e instanceof PodscopeError ? e : new PodscopeError('Internal', `${where}: ${String((e as Error)?.message ?? e)}`, { cause: e });
  const raw = e.metadata?.get(PODSCOPE_ERROR_METADATA_KEY)?.[0];
  if (raw !== undefined) {
    try {
      return deserializeError(JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : raw));
    } catch {
      // fall through to the plain mapping
    }
  }
  const code = GRPC_TO_CODE[e.code] ?? 'Internal';
  if (code === 'Unavailable') {
    return new PodscopeError('Unavailable', `CRI endpoint ${where} is unavailable: ${e.details || e.message}`, { details: { grpcCode: e.code } });
  }
  return new PodscopeError(code, e.details || e.message, { details: { grpcCode: e.code, endpoint: where } });
}
