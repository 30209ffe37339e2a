/**
 * Property test of the CRI server: arbitrary PodSandboxConfigs (NUL, control and non-BMP characters in names,
 * labels, annotations, hostnames, DNS entries; port mappings with any numbers and host_ips; sysctls; bandwidth
 * annotations; namespace modes) sent through a real gRPC client to `podscope`'s CRI server, backed by the real
 * engine whose OS touch points are fakes that fail like the host does (tests/cri/helpers/fake-host-engine.ts).
 *
 * Properties: RunPodSandbox answers only OK, INVALID_ARGUMENT, NOT_FOUND or ALREADY_EXISTS (an UNKNOWN or INTERNAL
 * means bad input got past validation and failed after acquiring something, which is how 199 of 10,000 fuzzed
 * requests were answered before); a refused request acquired nothing; the server keeps serving (Version after
 * every batch); the fakes hold exactly what the OK sandboxes hold, and nothing after stop+remove of all of them.
 *
 * Bounded for CI (PODSCOPE_FUZZ_RUNS, default 300); PODSCOPE_FUZZ_SEED replays a run. Prints the counts by code.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status as Code, type ServiceError } from '@grpc/grpc-js';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { runPodSandboxRequest } from './helpers/pod-config-arbitraries';
import { createFakeHostEngine, type FakeHostEngine } from './helpers/fake-host-engine';
import { rpc, tempDir } from './helpers/grpc';

const RUNS = Number(process.env.PODSCOPE_FUZZ_RUNS ?? 300);
const SEED = process.env.PODSCOPE_FUZZ_SEED ? Number(process.env.PODSCOPE_FUZZ_SEED) : undefined;
const BATCH = 50;
const ALLOWED = new Set([Code.OK, Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.ALREADY_EXISTS]);

const request = runPodSandboxRequest();

// ---- the server under test ---------------------------------------------------------------------------------------

const tmp = tempDir('podscope-r3-fuzz-');
let host: FakeHostEngine;
let server: CriServer;
let client: pb.RuntimeServiceClient;

beforeAll(async () => {
  host = await createFakeHostEngine('podscope-r3-fuzz-engine-');
  server = await startCriServer({ engine: host.engine, socketPath: join(tmp.dir, 'cri.sock') });
  client = new pb.RuntimeServiceClient(`unix://${server.socketPath}`, credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await host?.dispose();
  tmp.cleanup();
});

describe('RunPodSandbox over arbitrary PodSandboxConfigs', () => {
  it(
    `answers only OK / INVALID_ARGUMENT / NOT_FOUND / ALREADY_EXISTS, acquires nothing when refusing, keeps serving, leaks nothing (${RUNS} runs)`,
    async () => {
      const counts = new Map<string, number>();
      const unexpected: Array<{ code: string; details: string }> = [];
      const ok: Array<{ id: string; hostNetwork: boolean }> = [];
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(request, async (req) => {
          const before = host.acquisitions();
          let code: number = Code.OK;
          let details = '';
          try {
            const res = await rpc(client, (c) => c.runPodSandbox, req, 30_000);
            ok.push({
              id: res.podSandboxId,
              hostNetwork: req.config?.linux?.securityContext?.namespaceOptions?.network === pb.NamespaceMode.NODE,
            });
          } catch (e) {
            code = (e as ServiceError).code;
            details = (e as ServiceError).details;
          }
          const name = Code[code] ?? String(code);
          counts.set(name, (counts.get(name) ?? 0) + 1);
          if (++runs % BATCH === 0)
            expect((await rpc(client, (c) => c.version, { version: '0.1.0' }, 10_000)).runtimeName).toBe('podscope');
          if (!ALLOWED.has(code)) unexpected.push({ code: name, details: details.slice(0, 300) });
          expect(ALLOWED.has(code), `${name}: ${details.slice(0, 500)}`).toBe(true);
          // refused before anything was acquired: no netns, no CNI ADD, no runc, no files
          if (code !== Code.OK) expect(host.acquisitions(), `${name}: ${details.slice(0, 200)}`).toBe(before);
        }),
        { numRuns: RUNS, ...(SEED !== undefined && { seed: SEED }), endOnFailure: true },
      );
      console.log(
        `CRI fuzz: ${runs} RunPodSandbox calls; by code: ${[...counts]
          .sort()
          .map(([k, n]) => `${k}=${n}`)
          .join(', ')}`,
      );
      expect(unexpected).toEqual([]);
      expect((await rpc(client, (c) => c.version, { version: '0.1.0' })).runtimeName).toBe('podscope');

      // exactly what the OK sandboxes hold: a container and files each; a netns and two CNI cache entries each
      // (lo and eth0) unless host-network
      const own = ok.filter((s) => !s.hostNetwork).length;
      expect(host.held()).toEqual({ netns: own, containers: ok.length, files: ok.length, shm: ok.length, cniCache: 2 * own });
      const listed = await rpc(client, (c) => c.listPodSandbox, { filter: undefined });
      expect(listed.items.map((i) => i.id).sort()).toEqual(ok.map((s) => s.id).sort());
      expect(listed.items.every((i) => i.state === pb.PodSandboxState.SANDBOX_READY)).toBe(true);

      for (const { id } of ok) {
        await rpc(client, (c) => c.stopPodSandbox, { podSandboxId: id });
        await rpc(client, (c) => c.removePodSandbox, { podSandboxId: id });
      }
      expect(host.held()).toEqual({ netns: 0, containers: 0, files: 0, shm: 0, cniCache: 0 });
      expect((await rpc(client, (c) => c.listPodSandbox, { filter: undefined })).items).toEqual([]);
    },
    // a failure bound that scales with PODSCOPE_FUZZ_RUNS: 300 runs took 25-40 s beside npm test's other phases, and
    // 90 s once, when stage 2 started early and both cores were busy throughout (a failure bound, not a speed check)
    120_000 + RUNS * 400,
  );
});
