/**
 * Attach: returns a single-use URL to the running container's own stdio (kubelet's validateAttachRequest, and
 * containerd's container_attach.go: the container must be running).
 */
import type * as pb from '../generated/runtime_v1';
import type { StreamingServer } from '../streaming/server';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';
import { requireRunningContainer, requireStreaming, validateStreamFlags } from './container-exec';

export async function attach(engine: CriEngine, server: StreamingServer | undefined, req: pb.AttachRequest): Promise<pb.AttachResponse> {
  // a runtime without streaming does not serve the RPC at all, whatever the request (clients probe with an empty one)
  const streaming = requireStreaming(server);
  requireContainerId(req.containerId);
  validateStreamFlags(req);
  const containerId = await requireRunningContainer(engine, req.containerId);
  return { url: streaming.getAttach({ containerId, tty: req.tty, stdin: req.stdin, stdout: req.stdout, stderr: req.stderr }) };
}
