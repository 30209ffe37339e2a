/**
 * A CRI runtime.v1 connection over a unix socket, checked the way cri-client does: Version first, and a peer
 * whose reply lacks any of the four strings (or that does not speak runtime.v1 at all) is not a CRI endpoint.
 * Calls are promisified with a per-call deadline; failures come back as PodscopeErrors naming the socket.
 */
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { credentials, Metadata, status as GrpcStatus, type CallOptions, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { PodscopeError } from '../../../shared/domain/errors';
import * as pb from '../generated/runtime_v1';
import { cleanGrpcDetails, fromGrpcError, isServiceError } from '../errors';
import { normalizeAddress } from '../address';

export { normalizeAddress } from '../address';

export interface CriConnectionOptions {
  /** deadline of the initial Version call (ms), default 5000 */
  connectTimeoutMs?: number;
  /** deadline of every other unary call (ms), default 120000 (RunPodSandbox on a cold runtime is slow) */
  callTimeoutMs?: number;
}

type UnaryMethod<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  cb: (e: ServiceError | null, res: Res) => void,
) => unknown;

export interface CriConnection {
  /** unix:///abs/path */
  readonly address: string;
  readonly socketPath: string;
  readonly version: pb.VersionResponse;
  readonly client: pb.RuntimeServiceClient;
  call<Req, Res>(method: (c: pb.RuntimeServiceClient) => UnaryMethod<Req, Res>, req: Req, timeoutMs?: number): Promise<Res>;
  events(): ClientReadableStream<pb.ContainerEventResponse>;
  close(): void;
}

export async function connectCri(address: string, opts: CriConnectionOptions = {}): Promise<CriConnection> {
  const { address: addr, socketPath } = normalizeAddress(address);
  const client = new pb.RuntimeServiceClient(addr, credentials.createInsecure(), {
    // cri-client's limit; verbose statuses with a plugin trace can be large
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    'grpc.max_send_message_length': 16 * 1024 * 1024,
    // the authority cri-client uses; a unix socket has no host name
    'grpc.default_authority': 'localhost',
  });
  const callTimeoutMs = opts.callTimeoutMs ?? 120_000;

  const call = <Req, Res>(
    method: (c: pb.RuntimeServiceClient) => UnaryMethod<Req, Res>,
    req: Req,
    timeoutMs = callTimeoutMs,
  ): Promise<Res> =>
    new Promise<Res>((resolve, reject) => {
      const fn = method(client).bind(client) as UnaryMethod<Req, Res>;
      fn(req, new Metadata(), { deadline: Date.now() + timeoutMs }, (e, res) => (e ? reject(fromGrpcError(e, addr)) : resolve(res)));
    });

  let version: pb.VersionResponse;
  try {
    version = await new Promise<pb.VersionResponse>((resolve, reject) => {
      client.version({ version: '0.1.0' }, new Metadata(), { deadline: Date.now() + (opts.connectTimeoutMs ?? 5000) }, (e, res) =>
        e ? reject(e) : resolve(res),
      );
    });
  } catch (e) {
    client.close();
    throw connectError(e, socketPath);
  }
  const missing = (['version', 'runtimeName', 'runtimeVersion', 'runtimeApiVersion'] as const).filter((k) => !version[k]);
  if (missing.length) {
    client.close();
    throw new PodscopeError('Unavailable', `${socketPath} is not a CRI runtime.v1 endpoint: its Version reply lacks ${missing.join(', ')}`);
  }
  return {
    address: addr,
    socketPath,
    version,
    client,
    call,
    events: () => client.getContainerEvents({}),
    close: () => client.close(),
  };
}

/** Every way the first call can fail becomes Unavailable, with the path and the underlying reason. */
function connectError(e: unknown, socketPath: string): PodscopeError {
  if (!isServiceError(e))
    return new PodscopeError('Unavailable', `cannot connect to CRI endpoint ${socketPath}: ${String(e)}`, { cause: e });
  const why =
    e.code === GrpcStatus.UNIMPLEMENTED
      ? 'it speaks gRPC but does not serve runtime.v1.RuntimeService'
      : e.code === GrpcStatus.DEADLINE_EXCEEDED
        ? 'no gRPC answer before the deadline (is it a CRI socket?)'
        : e.code === GrpcStatus.UNAVAILABLE
          ? (unreachableReason(e.details, socketPath) ?? cleanGrpcDetails(e.details))
          : `${GrpcStatus[e.code] ?? e.code}: ${e.details}`;
  return new PodscopeError('Unavailable', `cannot use CRI endpoint ${socketPath}: ${why}`, {
    details: { grpcCode: e.code, socketPath, grpcDetails: e.details },
  });
}

/** grpc-js's "No connection established. Last error: connect ENOENT …" said plainly, from what is at the path. */
function unreachableReason(details: string, socketPath: string): string | undefined {
  // the peer answered, but not with HTTP/2 (grpc-js: "Protocol error"): something else listens there
  if (/Protocol error/.test(details)) return 'something listens on this socket but does not speak gRPC (HTTP/2): it is not a CRI socket';
  const errno = /\b(ENOENT|ECONNREFUSED|EACCES|EPERM|ENOTSOCK|ENOTDIR)\b/.exec(details)?.[1];
  if (!errno) return undefined;
  const denied =
    "permission denied: this user may not connect to the socket (its owner, group or mode; containerd's [grpc] gid or the podscope group gives access)";
  let st: Stats | undefined;
  try {
    // lstat: describe the path itself; a symlink is named as such, never followed to describe whatever it points at
    st = lstatSync(socketPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') return denied;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
  }
  if (!st) return 'nothing exists at this path (is the runtime running, and is this its socket path?)';
  if (st.isSymbolicLink()) {
    let target = '';
    try {
      target = ` to ${readlinkSync(socketPath)}`;
    } catch {
      /* unreadable */
    }
    return `it is a symbolic link${target}, and connecting through it failed (${errno}); give the socket's own path`;
  }
  if (!st.isSocket())
    return `it is ${st.isDirectory() ? 'a directory' : st.isFile() ? 'a regular file' : 'a special file'}, not a unix socket`;
  if (errno === 'EACCES' || errno === 'EPERM') return denied;
  if (errno === 'ECONNREFUSED') return 'nothing accepts connections on this socket (a stale socket left by a runtime that stopped?)';
  return undefined;
}
