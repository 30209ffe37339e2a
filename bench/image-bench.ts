/**
 * `npx tsx bench/image-bench.ts [-n N]`: pull time of the busybox test image (one ~1 MB layer) from the test registry
 * on 127.0.0.1 into a fresh store each time (cold: download + verify + unpack + commit), gzip and zstd, with and
 * without token auth; a warm pull (layer already present); load of a docker-save archive; and the overlay rootfs
 * prepare/release. Needs root. Temp dirs /tmp/podscope-bench-images-*. Prints figures; asserts nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalImageStore } from '../electron/engine/images/store';
import { NodeProcessRunner } from '../electron/engine/os/exec';
import { buildBusyboxImage, writeDockerSave } from '../testkit/busybox-image';
import { startTestRegistry } from '../testkit/registry';
import { fmt, percentile, Samples } from './stats';

export async function runImageBench(n: number): Promise<void> {
  const base = await mkdtemp('/tmp/podscope-bench-images-');
  const runner = new NodeProcessRunner();
  const plain = await startTestRegistry({ port: 27400, portAttempts: 90 });
  const token = await startTestRegistry({ port: plain.port + 1, portAttempts: 90, auth: { kind: 'token', username: 'b', password: 'b' } });
  const samples = new Samples();
  try {
    const gzip = buildBusyboxImage({ compression: 'gzip' });
    const zstd = buildBusyboxImage({ compression: 'zstd' });
    for (const r of [plain, token]) {
      r.putImage('bench/busybox', 'gzip', gzip);
      r.putImage('bench/busybox', 'zstd', zstd);
    }
    const saved = writeDockerSave(join(base, 'saved.tar'), [{ image: gzip, repoTags: ['bench:saved'] }]);
    let k = 0;
    const fresh = () => LocalImageStore.open({ root: join(base, `s${k++}`, 'images'), runner });
    const time = async (key: string, fn: () => Promise<unknown>) => {
      const t = performance.now();
      await fn();
      samples.add(key, performance.now() - t);
    };
    for (let i = 0; i < n; i++) {
      await time('pull gzip, cold', async () => (await fresh()).pull(`${plain.host}/bench/busybox:gzip`));
      await time('pull zstd, cold', async () => (await fresh()).pull(`${plain.host}/bench/busybox:zstd`));
      await time('pull gzip, cold, token auth', async () =>
        (await fresh()).pull(`${token.host}/bench/busybox:gzip`, { auth: { username: 'b', password: 'b' } }),
      );
      const s = await fresh();
      await s.pull(`${plain.host}/bench/busybox:gzip`);
      await time('pull zstd, layer present (warm)', () => s.pull(`${plain.host}/bench/busybox:zstd`));
      await time('load docker-save', async () => (await fresh()).load(saved));
      let rootfs: Awaited<ReturnType<typeof s.prepareRootfs>> | undefined;
      await time('prepareRootfs (overlay mount)', async () => {
        rootfs = await s.prepareRootfs(gzip.id, `bench-${i}`, join(base, `c${i}`));
      });
      await time('release rootfs', () => rootfs!.release());
    }
    process.stdout.write(
      `image store, busybox ${gzip.layerTars[0]!.length} B layer (${gzip.layers[0]!.bytes.length} B gzip, ${zstd.layers[0]!.bytes.length} B zstd), n=${n}\n`,
    );
    process.stdout.write(`${'step'.padEnd(36)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}\n`);
    for (const key of samples.keys())
      process.stdout.write(
        `${key.padEnd(36)}${fmt(percentile(samples.get(key), 50)).padStart(10)}${fmt(percentile(samples.get(key), 95)).padStart(10)}\n`,
      );
  } finally {
    await plain.close();
    await token.close();
    await rm(base, { recursive: true, force: true });
  }
}

const { values } = parseArgs({ options: { n: { type: 'string', short: 'n' } } });
runImageBench(Number(values.n ?? 10)).catch((e: unknown) => {
  process.stderr.write(`image bench: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
