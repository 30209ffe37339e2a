/**
 * `npm run bench:ui`: the app's pods list at 10,000 pods in Debian's Chromium, against a synthetic CRI endpoint
 * (testkit/synthetic-cri.ts, a real gRPC runtime.v1 server that counts RPCs). Browser mode is started over the real
 * SandboxEngine on touch-point fakes (the local endpoint, no host network), the synthetic endpoint is added, and the
 * page switches to it. Printed, never asserted:
 *   - time to first rows and to all rows (the toolbar shows "10000 sandboxes") after the switch;
 *   - keystroke-to-paint p50/p90 over ~30 keystrokes in the filter box: from the key event to the first frame after
 *     the list shows the count the filter must give (computed here from the same pods);
 *   - RPCs the endpoint receives during 10 s idle (and PodSandboxStatus calls among them: the app reads pod IPs only for
 *     the rows on screen), and the whole RPC count per method;
 *   - the renderer's JS heap (CDP, after a GC).
 * Runs once without GetContainerEvents (a containerd 1.6-like runtime: the app must re-list) and once with it.
 * Needs the renderer build (`npm run build:renderer`; done here when dist/renderer is missing).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { chromium, type Page } from 'playwright-core';
import { createTestEngine } from '../../testkit/fakes/test-engine';
import { assembleAppCore } from '../../electron/core/app-core';
import { startBrowserHost } from '../../electron/host/browser-host';
import { startSyntheticCri, type SyntheticCri, type SyntheticPod } from '../../testkit/synthetic-cri';

const HELP = `npm run bench:ui -- [--pods N] [--mode relist|events|both] [--idle-ms MS] [--settle-max-ms MS] [--screenshot FILE] [--profile FILE] [--headed]`;

/** the flags e2e/playwright.config.ts gives the system Chromium */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};
const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : 'n/a');

/**
 * what the pods filter matches (renderer/src/features/pods/filter.ts): id, name, namespace, IPs, labels k=v. The app
 * knows a pod's IP only once it asked for the pod's status (rows it showed), so only those IPs can match.
 */
function shownFor(pods: SyntheticPod[], text: string, ipKnown: ReadonlySet<string>): number {
  const t = text.trim().toLowerCase();
  if (!t) return pods.length;
  return pods.filter((p) =>
    [p.id, p.name, p.namespace, ipKnown.has(p.id) ? p.ip : '', ...Object.entries(p.labels).map(([k, v]) => `${k}=${v}`)].some(
      (h) => h && h.toLowerCase().includes(t),
    ),
  ).length;
}

/** Waits until no PodSandboxStatus was asked for over 600 ms (the rows a filter shows get their IPs read, then pushed). */
async function statusesSettled(cri: SyntheticCri): Promise<void> {
  for (let last = -1; ;) {
    const now = cri.counts().PodSandboxStatus ?? 0;
    if (now === last) return;
    last = now;
    await new Promise((r) => setTimeout(r, 600));
  }
}
const countText = (shown: number, all: number) => (shown === all ? `${all} sandbox${all === 1 ? '' : 'es'}` : `${shown} of ${all}`);

const BS = 'Backspace';
const bs = (n: number) => Array<string>(n).fill(BS);
/**
 * Keystrokes typed one at a time: narrowing, widening (Backspace) and fresh words. Only keys that change the shown
 * count are measured (a key that leaves the count as it was cannot be told apart from no repaint).
 */
const KEYS: string[] = [
  ...'12',
  BS,
  ...'34',
  ...bs(3),
  ...'ns-7',
  ...bs(4),
  ...'pod-99',
  ...bs(6),
  ...'9f',
  BS,
  'e',
  ...bs(2),
  ...'tier=b',
  ...bs(6),
  ...'app-4',
  ...bs(5),
  '5',
  BS,
  '6',
  BS,
  '7',
  BS,
  '8',
  BS,
  ...'ns-1',
  '1',
  BS,
  '2',
  ...bs(5),
];

interface RunResult {
  mode: string;
  firstRowsMs: number;
  allRowsMs: number;
  statusCallsDuringLoad: number;
  settleMs: number;
  idleRpcs: number;
  idleStatusCalls: number;
  idleByMethod: Record<string, number>;
  keyP50: number;
  keyP90: number;
  keyMax: number;
  keyN: number;
  heapMb: number;
  totals: Record<string, number>;
}

async function runOnce(opts: {
  pods: number;
  events: boolean;
  idleMs: number;
  settleMaxMs: number;
  screenshot?: string;
  headed: boolean;
  profile?: string;
}): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'psp-bench-ui-'));
  const te = await createTestEngine({ tmpPrefix: 'psp-bench-ui-engine-' });
  const core = assembleAppCore(te.engine);
  const cri = await startSyntheticCri({ socketPath: join(dir, 'cri.sock'), pods: opts.pods, events: opts.events });
  const host = await startBrowserHost({ core, port: 0 });
  const browser = await chromium.launch({
    executablePath: process.env.PODSCOPE_CHROMIUM ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    headless: !opts.headed,
  });
  try {
    const ep = await core.endpoints.add({ address: cri.socketPath, label: 'synthetic 10k' });
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // tsx compiles the functions handed to page.evaluate with esbuild's keepNames, which calls a __name helper
    await page.addInitScript({ content: 'globalThis.__name = (f) => f;' });
    await page.goto(host.url);
    await page.getByText('No pod sandboxes yet').waitFor({ timeout: 30_000 });
    const statusBefore = cri.counts().PodSandboxStatus ?? 0;

    // ---- switch to the 10k endpoint: first rows, then all rows ----
    const expectedAll = countText(opts.pods, opts.pods);
    const load = await page.evaluate(
      ({ id, expectedAll }) =>
        new Promise<{ first: number; all: number }>((resolve, reject) => {
          const select = document.querySelector<HTMLSelectElement>('select[aria-label="Endpoint"]')!;
          const t0 = performance.now();
          let first = -1;
          const set = Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value')!.set!;
          set.call(select, id);
          select.dispatchEvent(new Event('change', { bubbles: true }));
          const deadline = t0 + 120_000;
          const tick = () => {
            const now = performance.now();
            if (first < 0 && document.querySelector('[role="row"][data-pod-name]')) first = now - t0;
            if (document.querySelector('.toolbar-count')?.textContent === expectedAll && first >= 0)
              return resolve({ first, all: now - t0 });
            if (now > deadline) return reject(new Error('the list did not appear within 120 s'));
            requestAnimationFrame(tick);
          };
          requestAnimationFrame(tick);
        }),
      { id: ep.id, expectedAll },
    );
    const statusCallsDuringLoad = (cri.counts().PodSandboxStatus ?? 0) - statusBefore;

    // ---- let background work settle (network facts of new rows), then count idle RPCs ----
    const settleStart = Date.now();
    // quiet: no more than 2 RPCs over a 2 s window (the re-list itself is 2)
    for (let last = cri.total(); ;) {
      await new Promise((r) => setTimeout(r, 2000));
      const now = cri.total();
      if (now - last <= 2 || Date.now() - settleStart > opts.settleMaxMs) break;
      last = now;
    }
    const settleMs = Date.now() - settleStart;
    const before = cri.counts();
    await new Promise((r) => setTimeout(r, opts.idleMs));
    const after = cri.counts();
    const idleByMethod: Record<string, number> = {};
    for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) idleByMethod[k] = v - (before[k] ?? 0);
    const idleRpcs = (Object.values(idleByMethod).reduce((a, b) => a + b, 0) * 10_000) / opts.idleMs;
    const idleStatusCalls = ((idleByMethod.PodSandboxStatus ?? 0) * 10_000) / opts.idleMs;

    if (opts.screenshot) await page.screenshot({ path: opts.screenshot });

    // ---- keystroke to paint ----
    const prof = opts.profile ? await page.context().newCDPSession(page) : undefined;
    if (prof) {
      await prof.send('Profiler.enable');
      await prof.send('Profiler.setSamplingInterval', { interval: 200 });
      await prof.send('Profiler.start');
    }
    const samples = await typeAndMeasure(page, cri, opts.pods);
    if (prof && opts.profile) {
      const { profile } = (await prof.send('Profiler.stop')) as { profile: unknown };
      writeFileSync(opts.profile, JSON.stringify(profile));
    }

    // ---- heap ----
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
    if (errors.length) process.stdout.write(`  page errors: ${errors.join(' | ')}\n`);
    return {
      mode: opts.events ? 'with GetContainerEvents' : 'without GetContainerEvents (re-list)',
      firstRowsMs: load.first,
      allRowsMs: load.all,
      statusCallsDuringLoad,
      settleMs,
      idleRpcs,
      idleStatusCalls,
      idleByMethod,
      keyP50: pct(samples, 50),
      keyP90: pct(samples, 90),
      keyMax: Math.max(...samples),
      keyN: samples.length,
      heapMb: heap.usedSize / 1024 / 1024,
      totals: cri.counts(),
    };
  } finally {
    await browser.close().catch(() => undefined);
    await host.close().catch(() => undefined);
    core.endpoints.close();
    await cri.close();
    await te.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** each key: from its keydown (event time) to the first frame after the count shows the filter's answer */
async function typeAndMeasure(page: Page, cri: SyntheticCri, all: number): Promise<number[]> {
  const pods = cri.pods;
  const input = page.getByRole('textbox', { name: 'Filter pods' }).or(page.getByRole('searchbox', { name: 'Filter pods' }));
  await input.click();
  await page.evaluate(() => {
    const w = window as unknown as { __bench: { t0: number; done: number[]; expected: string } };
    w.__bench = { t0: 0, done: [], expected: '' };
    const box = document.querySelector<HTMLInputElement>('input[aria-label="Filter pods"]')!;
    box.addEventListener(
      'keydown',
      (e) => {
        w.__bench.t0 = e.timeStamp;
        const tick = () => {
          if (document.querySelector('.toolbar-count')?.textContent === w.__bench.expected) {
            // the frame after the DOM has the answer: the list is painted there
            requestAnimationFrame(() => w.__bench.done.push(performance.now() - w.__bench.t0));
            return;
          }
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      },
      { capture: true },
    );
  });
  let text = '';
  let shown = countText(all, all);
  const samples: number[] = [];
  for (const key of KEYS) {
    text = key === BS ? text.slice(0, -1) : text + key;
    await statusesSettled(cri);
    const expected = countText(shownFor(pods, text, cri.statusedIds()), all);
    if (expected === shown) {
      // not measurable (see KEYS): typed, then the next key waits for its own answer
      await page.keyboard.press(key);
      await page.waitForTimeout(300);
      continue;
    }
    shown = expected;
    await page.evaluate((e) => {
      (window as unknown as { __bench: { expected: string } }).__bench.expected = e;
    }, expected);
    const n = samples.length;
    await page.keyboard.press(key);
    await page.waitForFunction((k) => (window as unknown as { __bench: { done: number[] } }).__bench.done.length > k, n, {
      timeout: 30_000,
    });
    samples.push(await page.evaluate((k) => (window as unknown as { __bench: { done: number[] } }).__bench.done[k]!, n));
    if (process.env.BENCH_UI_DEBUG) process.stdout.write(`  ${JSON.stringify(text)} → ${expected}: ${samples.at(-1)!.toFixed(0)} ms\n`);
    // a person types a key every ~100 ms or more; each key is measured on its own
    await page.waitForTimeout(120);
  }
  return samples;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      pods: { type: 'string' },
      mode: { type: 'string' },
      'idle-ms': { type: 'string' },
      /** longest wait for background work to stop before the idle count (an app that polls never stops) */
      'settle-max-ms': { type: 'string' },
      screenshot: { type: 'string' },
      /** a CPU profile of the renderer while typing (Chrome DevTools .cpuprofile) */
      profile: { type: 'string' },
      headed: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const pods = Number(values.pods ?? 10_000);
  const idleMs = Number(values['idle-ms'] ?? 10_000);
  const mode = values.mode ?? 'both';
  if (!Number.isInteger(pods) || pods < 1) throw new Error(`--pods must be a positive integer, not ${values.pods}`);
  if (!['relist', 'events', 'both'].includes(mode)) throw new Error(`--mode must be relist, events or both, not ${mode}`);
  const rendererDir = process.env.PODSCOPE_RENDERER_DIR ?? join(import.meta.dirname, '../../dist/renderer');
  if (!existsSync(join(rendererDir, 'index.html'))) {
    process.stdout.write('# building the renderer (dist/renderer is missing)\n');
    execFileSync('npm', ['run', 'build:renderer'], { stdio: 'inherit' });
  }
  process.stdout.write(
    `# podscope bench:ui, ${pods} pods on a synthetic CRI endpoint, Chromium 1440x900 (2 shared cores: figures vary with load)\n`,
  );
  const modes = mode === 'both' ? [false, true] : [mode === 'events'];
  for (const events of modes) {
    const r = await runOnce({
      pods,
      events,
      idleMs,
      settleMaxMs: Number(values['settle-max-ms'] ?? 60_000),
      headed: !!values.headed,
      ...(values.profile && { profile: values.profile.replace(/(\.cpuprofile)?$/, events ? '-events.cpuprofile' : '-relist.cpuprofile') }),
      ...(values.screenshot && { screenshot: values.screenshot.replace(/(\.png)?$/, events ? '-events.png' : '-relist.png') }),
    });
    process.stdout.write(
      [
        `\n## ${r.mode}`,
        `| measure | value |`,
        `|---|---|`,
        `| time to first rows | ${ms(r.firstRowsMs)} |`,
        `| time to all rows (${pods} shown) | ${ms(r.allRowsMs)} |`,
        `| PodSandboxStatus calls before all rows showed | ${r.statusCallsDuringLoad} |`,
        `| background settle after the list showed | ${ms(r.settleMs)} |`,
        `| idle RPCs per 10 s | ${r.idleRpcs.toFixed(1)} ${JSON.stringify(r.idleByMethod)} |`,
        `| idle PodSandboxStatus calls per 10 s | ${r.idleStatusCalls.toFixed(1)} |`,
        `| keystroke to paint p50 / p90 / max (n=${r.keyN}) | ${ms(r.keyP50)} / ${ms(r.keyP90)} / ${ms(r.keyMax)} |`,
        `| renderer JS heap after GC | ${r.heapMb.toFixed(1)} MB |`,
        `| RPCs in the whole run | ${JSON.stringify(r.totals)} |`,
        '',
      ].join('\n'),
    );
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench:ui failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
