/**
 * Where a PodSandboxStatus / ListPodSandbox round trip spends its time, in one process with the real engine over
 * touch-point fakes (nothing on the host): the engine call alone, the CRI adapter (engine + conversion), the
 * response encoding, and the whole gRPC round trip on a unix socket with and without the authority shim.
 * `npx tsx bench/cri-rpc-cost.ts [pods] [calls]`. Prints figures; asserts nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestEngine } from '../testkit/fakes/test-engine';
import { startCriServer } from '../electron/cri/server';
import { podSandboxStatus } from '../electron/cri/server/sandbox-status';
import { listPodSandbox } from '../electron/cri/server/sandbox-list';
import { connectCri } from '../electron/cri/client/connection';
import { serializeListPodSandboxResponse, serializePodSandboxStatusResponse } from '../electron/cri/server/wire-cache';
import { loadAverage } from './daemon';
import { fmt, percentile, row } from './stats';

async function measure(calls: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < Math.min(200, calls); i++) await fn(); // warm-up (JIT, caches)
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return percentile(samples, 50) * 1000;
}

async function main(): Promise<void> {
  const pods = Number(process.argv[2] ?? 1000);
  const calls = Number(process.argv[3] ?? 2000);
  const te = await createTestEngine({ tmpPrefix: 'podscope-p1-rpc-' });
  const dir = await mkdtemp(join(tmpdir(), 'podscope-p1-rpcsock-'));
  try {
    const ids: string[] = [];
    for (let i = 0; i < pods; i++) {
      ids.push(
        (await te.engine.run({ config: { metadata: { name: `p${i}`, namespace: 'cost', uid: `u${i}` }, labels: { pod: `p${i}` } } })).id,
      );
    }
    const id = ids[Math.floor(pods / 2)]!;
    const statusReq = { podSandboxId: id, verbose: false };
    const verboseReq = { podSandboxId: id, verbose: true };
    const listAll = { filter: undefined };
    const listId = { filter: { id, state: undefined, labelSelector: {} } };
    const listLabel = { filter: { id: '', state: undefined, labelSelector: { pod: `p${Math.floor(pods / 2)}` } } };
    const servers = {
      shim: await startCriServer({ engine: te.engine, socketPath: join(dir, 'shim.sock') }),
      raw: await startCriServer({ engine: te.engine, socketPath: join(dir, 'raw.sock'), authorityShim: false }),
    };
    const conn = { shim: await connectCri(servers.shim.socketPath), raw: await connectCri(servers.raw.socketPath) };
    const rows: Array<[string, number, number, number, number, number]> = [];
    const add = async (
      name: string,
      engineFn: () => Promise<unknown>,
      adapter: () => Promise<unknown>,
      encode: () => unknown,
      rpc: (c: typeof conn.shim) => Promise<unknown>,
    ) => {
      rows.push([
        name,
        await measure(calls, engineFn),
        await measure(calls, adapter),
        await measure(calls, encode),
        await measure(calls, () => rpc(conn.raw)),
        await measure(calls, () => rpc(conn.shim)),
      ]);
    };
    await add(
      'Status',
      () => te.engine.status(id),
      () => podSandboxStatus(te.engine, statusReq),
      async () => serializePodSandboxStatusResponse(await podSandboxStatus(te.engine, statusReq)),
      (c) => c.call((x) => x.podSandboxStatus, statusReq),
    );
    await add(
      'Status verbose',
      () => te.engine.status(id),
      () => podSandboxStatus(te.engine, verboseReq),
      async () => serializePodSandboxStatusResponse(await podSandboxStatus(te.engine, verboseReq)),
      (c) => c.call((x) => x.podSandboxStatus, verboseReq),
    );
    await add(
      'List',
      () => te.engine.list(),
      () => listPodSandbox(te.engine, listAll),
      async () => serializeListPodSandboxResponse(await listPodSandbox(te.engine, listAll)),
      (c) => c.call((x) => x.listPodSandbox, listAll),
    );
    await add(
      'List id=',
      () => te.engine.list({ id }),
      () => listPodSandbox(te.engine, listId),
      async () => serializeListPodSandboxResponse(await listPodSandbox(te.engine, listId)),
      (c) => c.call((x) => x.listPodSandbox, listId),
    );
    await add(
      'List label=',
      () => te.engine.list({ labelSelector: { pod: `p${Math.floor(pods / 2)}` } }),
      () => listPodSandbox(te.engine, listLabel),
      async () => serializeListPodSandboxResponse(await listPodSandbox(te.engine, listLabel)),
      (c) => c.call((x) => x.listPodSandbox, listLabel),
    );
    const w = [16, 10, 10, 12, 12, 12];
    process.stdout.write(
      `# one CRI call, ${pods} pods, p50 of ${calls} calls in µs (client and server in one process; load ${await loadAverage()})\n`,
    );
    process.stdout.write(`${row(['op', 'engine', 'adapter', '+encode', 'rpc no shim', 'rpc + shim'], w)}\n`);
    for (const r of rows) process.stdout.write(`${row([r[0], ...r.slice(1).map((x) => fmt(x as number))], w)}\n`);
    conn.shim.close();
    conn.raw.close();
    await servers.shim.close();
    await servers.raw.close();
  } finally {
    await te.close();
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`cri-rpc-cost: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
