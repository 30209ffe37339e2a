import { describe, expect, it } from 'vitest';
import { crictlInspectp } from '../../shared/domain/crictl-inspectp';
import { buildSandboxVerboseInfo } from '../../shared/domain/verbose-info';
import { statusToProto } from '../../electron/cri/convert/sandbox';
import { podSandboxStatus } from '../../electron/cri/server/sandbox-status';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { createTestEngine } from '../../testkit/fakes/test-engine';
import { formatStatus } from '../../electron/cli/commands/inspectp';

describe('the crictl inspectp shape the Raw tab offers', () => {
  it('is {status, info}: status is the PodSandboxStatus the CRI server sends, info the verbose document', async () => {
    const { engine, close } = await createTestEngine({ tmpPrefix: 'podscope-u1-inspectp-' });
    try {
      const { id } = await engine.run({
        config: {
          metadata: { name: 'web', namespace: 'ns', uid: 'u1', attempt: 1 },
          labels: { app: 'web' },
          linux: { security_context: { namespace_options: { pid: 1 } } },
        },
      });
      const s = await engine.status(id);
      const doc = crictlInspectp(s);
      expect(Object.keys(doc)).toEqual(['status', 'info']);
      // every field protobuf JSON would print (ts-proto's toJSON omits defaults; crictl prints them too)
      expect(doc.status).toMatchObject(pb.PodSandboxStatus.toJSON(statusToProto(s)) as object);
      expect(doc.status).toMatchObject({
        id,
        state: 'SANDBOX_READY',
        metadata: { name: 'web', namespace: 'ns', uid: 'u1', attempt: 1 },
        labels: { app: 'web' },
      });
      expect(doc.status.linux.namespaces.options).toMatchObject({ network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
      expect(doc.status.createdAt).toMatch(/^[1-9]\d+$/);
      // info is what the server puts in info["info"], which crictl prints parsed under its key
      const res = await podSandboxStatus(engine, { podSandboxId: id, verbose: true });
      expect(doc.info).toEqual(JSON.parse(res.info.info!));
      expect(doc.info).toEqual(JSON.parse(JSON.stringify(buildSandboxVerboseInfo(s))));
      // a stopped sandbox shows no address, as the CRI server answers
      await engine.stop(id);
      const stopped = crictlInspectp(await engine.status(id));
      expect(stopped.status).toMatchObject({ state: 'SANDBOX_NOTREADY', network: { ip: '', additionalIps: [] } });
    } finally {
      await close();
    }
  });
});

describe('inspectp text', () => {
  it('numbers port mappings from 1 and keeps two spaces after a long label ("Bandwidth ingress")', async () => {
    const { engine, close } = await createTestEngine({ tmpPrefix: 'podscope-u1-inspectp-text-' });
    try {
      const { id } = await engine.run({
        config: {
          metadata: { name: 'web', namespace: 'ns', uid: 'u2', attempt: 0 },
          port_mappings: [{ container_port: 80, host_port: 31555 }],
          annotations: { 'kubernetes.io/ingress-bandwidth': '10M' },
        },
      });
      const text = formatStatus(await engine.status(id));
      expect(text).toMatch(/^Port mapping 1 {2,}31555 -> 80\/tcp$/m);
      expect(text).toMatch(/^Bandwidth ingress {2}10M = 10000000 bit\/s/m);
      expect(text).not.toMatch(/^Port 0/m);
    } finally {
      await close();
    }
  });
});
