/**
 * PortForward: returns a single-use URL whose sessions connect to ports inside the pod's network namespace.
 * kubelet requires pod_sandbox_id; containerd (internal/cri/server/sandbox_portforward.go) also requires the sandbox
 * to be ready. Ports are not checked against what the pod exposes (neither does containerd), only for range.
 */
import type * as pb from '../generated/runtime_v1';
import { invalidArgument, PodscopeError } from '../../../shared/domain/errors';
import type { StreamingServer } from '../streaming/server';
import type { CriEngine } from './handler';
import { requireSandboxId } from './resolve-id';
import { requireStreaming } from './container-exec';

export async function portForward(
  engine: CriEngine,
  server: StreamingServer | undefined,
  req: pb.PortForwardRequest,
): Promise<pb.PortForwardResponse> {
  // a runtime without streaming does not serve the RPC at all, whatever the request (clients probe with an empty one)
  const streaming = requireStreaming(server);
  requireSandboxId(req.podSandboxId);
  for (const p of req.port) if (!Number.isInteger(p) || p < 1 || p > 65535) throw invalidArgument(`port ${p} is out of range 1-65535`);
  const status = await engine.status(req.podSandboxId);
  if (status.state !== 'SANDBOX_READY') throw new PodscopeError('FailedPrecondition', `pod sandbox ${status.id} is not ready`);
  return { url: streaming.getPortForward({ sandboxId: status.id, ports: req.port }) };
}
