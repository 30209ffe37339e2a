/**
 * A production install runs on what `npm run build` makes, with no tsx, Vite, test code or node_modules at all:
 * the build is copied with bin/ and package.json into an empty directory, and the CLI, `podscope serve` and
 * `npm start` (bin/start.mjs) run from there. `npm start` takes the engine flags the README lists, as the CLI does:
 * the engine it hosts reports the directories it was given.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const exec = promisify(execFile);
let dir: string;
let app: string;
const children: ChildProcess[] = [];

function engineFlags(): string[] {
  return [
    '--state-dir',
    join(dir, 'state'),
    '--run-dir',
    join(dir, 'run'),
    '--cni-conf-dir',
    join(dir, 'net.d'),
    '--cni-cache-dir',
    join(dir, 'cache'),
    '--netns-dir',
    join(dir, 'netns'),
    '--ip-pref',
    'ipv6',
    '--max-conf-num',
    '2',
  ];
}

async function podscope(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [join(app, 'bin/podscope.mjs'), ...args], { cwd: app });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Starts a browser-mode launcher and resolves with the URL it prints. */
function startServer(script: string, args: string[]): Promise<string> {
  const child = spawn(process.execPath, [join(app, script), ...args], {
    cwd: app,
    env: { ...process.env, DISPLAY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let errText = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(out);
      if (m) resolve(m[0]);
    });
    child.stderr!.on('data', (d: Buffer) => (errText += d.toString()));
    child.on('exit', (code) => reject(new Error(`${script} exited ${code} before printing a URL: ${errText}`)));
  });
}

/** One channel call over browser mode's WebSocket, authenticated with the URL's token. */
async function call(url: string, channel: string, payload: unknown): Promise<{ ok: boolean; result?: unknown }> {
  const u = new URL(url);
  const ws = new WebSocket(`ws://${u.host}/ipc?token=${encodeURIComponent(u.searchParams.get('token')!)}`);
  try {
    return await new Promise((resolve, reject) => {
      ws.on('error', reject);
      ws.on('open', () => ws.send(JSON.stringify({ t: 'req', id: 1, channel, payload })));
      ws.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { t: string; id?: number; reply?: { ok: boolean; result?: unknown } };
        if (frame.t === 'res' && frame.id === 1) resolve(frame.reply!);
      });
    });
  } finally {
    ws.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-prod-'));
  app = join(dir, 'app');
  await mkdir(join(dir, 'net.d'), { recursive: true });
  await exec(process.execPath, [join(ROOT, 'scripts/build-electron.mjs'), '--outdir', join(app, 'dist'), '--quiet'], { cwd: ROOT });
  await exec(
    process.execPath,
    [
      join(ROOT, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      join(ROOT, 'renderer/vite.config.ts'),
      '--outDir',
      join(app, 'dist/renderer'),
      '--emptyOutDir',
      '--logLevel',
      'warn',
    ],
    { cwd: ROOT },
  );
  await cp(join(ROOT, 'bin'), join(app, 'bin'), { recursive: true });
  await cp(join(ROOT, 'package.json'), join(app, 'package.json'));
}, 180_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
  // the engine makes its netns dir a mount point; never leave it mounted under a deleted dir
  await exec('umount', ['-l', join(dir, 'netns')]).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

describe('production install (build output only, no node_modules)', () => {
  it('has neither node_modules nor sources next to the build', async () => {
    expect((await readdir(app)).sort()).toEqual(['bin', 'dist', 'package.json']);
  });

  it('runs the CLI from the bundle: lists, and answers a missing sandbox with NotFound (exit 3)', async () => {
    const pods = await podscope(['pods', ...engineFlags()]);
    expect(pods.stderr).toBe('');
    expect(pods).toMatchObject({ code: 0, stdout: expect.stringMatching(/^POD ID\s+CREATED\s+STATE/) });
    const missing = await podscope(['inspectp', 'ffffffffffff', ...engineFlags()]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/NotFound/);
  });

  it('serves browser mode with `podscope serve`, and the UI it serves is the built renderer', async () => {
    const url = await startServer('bin/podscope.mjs', ['serve', ...engineFlags()]);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<div id="root">/);
  });

  it('`npm start` takes every engine flag the README lists and hands them to the engine', async () => {
    await podscope(['pods', ...engineFlags()]); // nothing held: the serve above has its own state dir lock until it ends
    for (const c of children.splice(0)) {
      c.kill('SIGTERM');
      await new Promise((r) => c.once('exit', r));
    }
    const url = await startServer('bin/start.mjs', [...engineFlags(), '--cni-bin-dir', '/usr/lib/cni', '--plugin-timeout', '4321']);
    const info = await call(url, 'sandbox.info', { endpointId: 'local' });
    expect(info.ok).toBe(true);
    expect(info.result).toMatchObject({
      stateDir: join(dir, 'state'),
      runDir: join(dir, 'run'),
      cniConfDir: join(dir, 'net.d'),
      cniCacheDir: join(dir, 'cache'),
      netnsDir: join(dir, 'netns'),
      cniBinDirs: ['/usr/lib/cni'],
      ipPreference: 'ipv6',
      maxConfNum: 2,
      pluginTimeoutMs: 4321,
    });
  });
});
