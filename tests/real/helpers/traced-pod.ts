/**
 * What the probe-trace files start from: a throwaway env (its lease's bridge, with masquerade), an engine that does
 * not probe on its own, and one ready pod `web` publishing container port 8080 on the env's first host port; and the
 * CLI's flags for that engine's dirs, for the tests that trace through `podscope probe --trace`.
 */
import type { SandboxEngine } from '../../../electron/engine/service/engine';
import { engineFlagsFor } from '../../../testkit/engine-flags';
import { createRealEnv, type RealEnv } from '../../../testkit/throwaway-env';

export interface TracedPod {
  env: RealEnv;
  engine: SandboxEngine;
  id: string;
  netnsPath: string;
  podIp4: string;
  hostPort: number;
}

export async function startTracedPod(tag: string): Promise<TracedPod> {
  const env = await createRealEnv({ tag, ipMasq: true });
  const engine = await env.engine({ probeOnReady: false });
  const hostPort = env.port(0);
  const { id } = await engine.run({
    config: {
      metadata: { name: 'web', namespace: `podscope-${tag}`, uid: `uid-${tag}-web` },
      hostname: 'web',
      port_mappings: [{ container_port: 8080, host_port: hostPort }],
    },
  });
  const st = await engine.status(id);
  return { env, engine, id, netnsPath: st.netnsPath!, podIp4: st.ip, hostPort };
}

/** `podscope` flags for the env's engine dirs, with Debian's plugins */
export const cliFlagsOf = (env: RealEnv): string[] => engineFlagsFor({ ...env.options, cniBinDirs: ['/usr/lib/cni'] });
