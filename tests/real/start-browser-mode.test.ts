/**
 * The README's first command, as a person runs it in a checkout: `npm start` with no Electron binary starts browser
 * mode from the checkout's own build of the CLI (which lives under node_modules/.cache, not beside dist/), serves the
 * built UI and prints its URL. A real process, a real HTTP request, a read of the page; the process is ended by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { leaseHost } from '../../testkit/allocator';
import { until } from '../../testkit/until';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const lease = leaseHost('start-browser');
let child: ChildProcess | undefined;
let dir: string | undefined;

afterAll(async () => {
  if (child?.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
  }
  if (dir) await rm(dir, { recursive: true, force: true });
  lease.release();
});

/** the checkout's build (not tsx), and no renderer dir from outside: the one the process finds is under test */
function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, PODSCOPE_CLI: '' };
  delete e.PODSCOPE_RENDERER_DIR;
  return e;
}

describe('npm start without an Electron binary', () => {
  it('serves the built UI in browser mode at the URL it prints', async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-start-'));
    const port = lease.port(0);
    let out = '';
    // bin/start.mjs is what `npm start` runs; --browser as where no Electron binary exists
    child = spawn(
      process.execPath,
      ['bin/start.mjs', '--browser', '--state-dir', join(dir, 'state'), '--run-dir', join(dir, 'run'), '--port', String(port)],
      { cwd: ROOT, env: env(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const url = await until(() => /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(out)?.[0], {
      timeout: 90_000,
      what: 'the browser-mode URL on its output',
    }).catch((e: Error) => {
      throw new Error(`${e.message}; the process said: ${out}`);
    });
    expect(url, out).toContain(`127.0.0.1:${port}/`);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/<div id="root"/);
  }, 120_000);
});
