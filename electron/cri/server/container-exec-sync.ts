/** ExecSync: runs a command in a running container and returns its output and exit code (timeout in seconds). */
import type * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

export async function execSync(engine: CriEngine, req: pb.ExecSyncRequest): Promise<pb.ExecSyncResponse> {
  const r = await engine.execSync(requireContainerId(req.containerId), req.cmd, Number(req.timeout));
  return { stdout: Buffer.from(r.stdout), stderr: Buffer.from(r.stderr), exitCode: r.exitCode };
}
