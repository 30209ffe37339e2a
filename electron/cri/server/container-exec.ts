/**
 * Exec: validates the request and returns a single-use URL on the streaming server (the session runs there).
 * Validation is kubelet's streaming server's (k8s.io/kubelet pkg/cri/streaming server.go validateExecRequest:
 * container_id required, tty with stderr refused, one of stdin/stdout/stderr required) plus containerd's
 * (internal/cri/server/container_exec.go: the container must exist and be running). Podscope also refuses an empty
 * cmd up front, which containerd lets fail later in runc; docs/semantics.md#cri-streaming.
 */
import type * as pb from '../generated/runtime_v1';
import { invalidArgument, notSupported, PodscopeError } from '../../../shared/domain/errors';
import type { StreamingServer } from '../streaming/server';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

export function validateStreamFlags(req: { tty: boolean; stdin: boolean; stdout: boolean; stderr: boolean }): void {
  // with a tty one stream carries the terminal: stdout and stderr cannot be told apart
  if (req.tty && req.stderr) throw invalidArgument('tty and stderr cannot both be true');
  if (!req.stdin && !req.stdout && !req.stderr) throw invalidArgument('one of stdin, stdout, or stderr must be set');
}

/** the container's full id, if it exists and is running (what containerd checks before handing out a URL) */
export async function requireRunningContainer(engine: CriEngine, id: string): Promise<string> {
  const status = await engine.containerStatus(requireContainerId(id));
  if (status.state !== 'CONTAINER_RUNNING') {
    throw new PodscopeError('FailedPrecondition', `container ${status.id} is in ${status.state} state`);
  }
  return status.id;
}

export function requireStreaming(server: StreamingServer | undefined): StreamingServer {
  if (!server) throw notSupported('streaming', 'this runtime has no streaming support (no ContainerStreaming configured)');
  return server;
}

export async function exec(engine: CriEngine, server: StreamingServer | undefined, req: pb.ExecRequest): Promise<pb.ExecResponse> {
  // a runtime without streaming does not serve the RPC at all, whatever the request (clients probe with an empty one)
  const streaming = requireStreaming(server);
  requireContainerId(req.containerId);
  validateStreamFlags(req);
  if (req.cmd.length === 0 || req.cmd[0] === '') throw invalidArgument('cmd must not be empty');
  const containerId = await requireRunningContainer(engine, req.containerId);
  return {
    url: streaming.getExec({ containerId, cmd: req.cmd, tty: req.tty, stdin: req.stdin, stdout: req.stdout, stderr: req.stderr }),
  };
}
