/** Wire-level helpers for CRI tests: a raw runtime.v1 client on a unix socket and promise wrappers that keep the status code. */
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import * as pb from '../../../electron/cri/generated/runtime_v1';

export { tempDir } from '../../../testkit/temp-dir';

export function rawClient(socketPath: string): pb.RuntimeServiceClient {
  return new pb.RuntimeServiceClient(`unix://${socketPath}`, credentials.createInsecure());
}

type Unary<Req, Res> = (req: Req, md: Metadata, opts: { deadline: number }, cb: (e: ServiceError | null, r: Res) => void) => unknown;

/** Resolves with the response, rejects with the ServiceError (code, details, metadata intact). */
export function rpc<Req, Res>(
  client: pb.RuntimeServiceClient,
  method: (c: pb.RuntimeServiceClient) => Unary<Req, Res>,
  req: Req,
  timeoutMs = 10_000,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    (method(client).bind(client) as Unary<Req, Res>)(req, new Metadata(), { deadline: Date.now() + timeoutMs }, (e, r) =>
      e ? reject(e) : resolve(r),
    );
  });
}

/** The gRPC status code a call fails with (or 0 when it succeeds). */
export async function codeOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 0;
  } catch (e) {
    return (e as ServiceError).code;
  }
}

/** Calls a method path with raw bytes (for RPCs Podscope does not declare). */
export function rawUnary(client: pb.RuntimeServiceClient, path: string): Promise<number> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      new Metadata(),
      { deadline: Date.now() + 5000 },
      (e) => resolve(e ? e.code : 0),
    );
  });
}

export const podConfig = (name: string, extra: Partial<pb.PodSandboxConfig> = {}): pb.PodSandboxConfig =>
  pb.PodSandboxConfig.fromPartial({
    metadata: { name, namespace: 'cri-test', uid: `uid-${name}`, attempt: 1 },
    hostname: name,
    labels: { app: name, tier: 'test' },
    annotations: { note: 'hello' },
    ...extra,
  });
