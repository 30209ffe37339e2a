/**
 * Into a real container from the app: a busybox container in a real pod on the e2e network, its log
 * followed in the log viewer, a shell in the terminal, one of its ports forwarded to 127.0.0.1. After each, no
 * process, socket or forwarded port is left.
 *
 * The terminal and port-forward specs run over the engine's ContainerStreaming (runc exec under a pty, a dial inside
 * the pod's netns); the log viewer reads the CRI log file the container's status names.
 */
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { request } from 'node:http';
import { test, expect } from '../support/fixtures';
import { startBusyboxPod, type BusyboxPod } from '../support/busybox-pod';
import { ContainersPage } from '../pages/containers-page';
import type { SandboxEnv } from '../support/sandbox-env';
import { reloadApp } from '../support/navigate';

async function withPod(env: SandboxEnv, name: string, command: string[], body: (pod: BusyboxPod) => Promise<void>) {
  const pod = await startBusyboxPod(env, { name, command });
  try {
    await body(pod);
  } finally {
    await pod.dispose();
  }
}

/** host processes whose command line names this container and says exec (a runc exec left behind) */
function hostExecsOf(containerId: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(containerId) && /\bexec\b/.test(l));
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

test('log viewer: follows the container log, a new line appears, stderr apart', async ({ app, env }) => {
  const containers = new ContainersPage(app.page);
  // prints, then waits for a file the test creates (through ExecSync) before printing again: the new line is caused
  // by the test, not by a timer
  const script = 'echo ready; echo oops >&2; while [ ! -e /tmp/go ]; do sleep 0.2; done; echo after-go; exec sleep 3600';
  await withPod(env, 'logs-e2e', ['/bin/sh', '-c', script], async (pod) => {
    await app.pods.open(pod.podName);
    await containers.roomForDetail();
    await containers.open();
    await expect(containers.row(pod.containerName)).toContainText('running');
    await containers.view(pod.containerName, 'Logs');
    await expect(containers.logLines).toContainText('ready');
    await expect(containers.logLines.locator('[data-stream="stderr"]')).toContainText('oops');
    await expect(containers.logLines).not.toContainText('after-go');

    await env.engine.execSync(pod.containerId, ['touch', '/tmp/go'], 10);
    await expect(containers.logLines).toContainText('after-go');
    await app.screenshot('40-container-logs');

    // leaving the log view ends the follow (no file handle kept): switching away and back starts a fresh one
    await containers.view(pod.containerName, 'Details');
    await expect(containers.logLines).toHaveCount(0);
  });
});

test('terminal: a typed command’s output appears, resize reaches the process, nothing is left after', async ({ app, env }) => {
  expect(env.engine.streaming, 'the engine streams (exec, attach, port-forward)').toBeDefined();
  const containers = new ContainersPage(app.page);
  await withPod(env, 'term-e2e', ['/bin/sh', '-c', 'exec sleep 3600'], async (pod) => {
    await app.pods.open(pod.podName);
    await containers.roomForDetail();
    await containers.open();
    await containers.view(pod.containerName, 'Terminal');
    const before = await containers.terminalSize();

    await containers.typeInTerminal('echo hi');
    // the echo's own line: "hi" alone, not the typed command
    await expect(containers.terminalRows.locator('div', { hasText: /^hi\s*$/ })).toHaveCount(1);

    await containers.typeInTerminal('busybox stty size');
    await expect(containers.terminalRows).toContainText(`${before.rows} ${before.cols}`);
    await app.screenshot('41-container-terminal');

    // a smaller window: the terminal is fitted again and the process is told (SIGWINCH); stty reads the new size
    await app.page.setViewportSize({ width: 1100, height: 700 });
    await expect.poll(async () => (await containers.terminalSize()).cols).not.toBe(before.cols);
    const after = await containers.terminalSize();
    await containers.typeInTerminal('busybox stty size');
    await expect(containers.terminalRows).toContainText(`${after.rows} ${after.cols}`);

    // leaving the terminal ends the shell: no sh but the container's own, no runc exec on the host
    await containers.view(pod.containerName, 'Details');
    await expect
      .poll(async () => {
        const ps = await env.engine.execSync(pod.containerId, ['ps'], 10);
        return Buffer.from(ps.stdout)
          .toString('utf8')
          .split('\n')
          .filter((l) => /\s\/bin\/sh$/.test(l.trimEnd())).length;
      })
      .toBe(0);
    await expect.poll(() => hostExecsOf(pod.containerId)).toEqual([]);

    // a reload drops the window's connection: a shell it had open ends as well
    await containers.view(pod.containerName, 'Terminal');
    await containers.typeInTerminal('echo again');
    await expect(containers.terminalRows.locator('div', { hasText: /^again\s*$/ })).toHaveCount(1);
    await reloadApp(app.page);
    await expect.poll(() => hostExecsOf(pod.containerId)).toEqual([]);
  });
});

test('forward port: an HTTP request through the forwarded port reaches busybox httpd in the container', async ({ app, env }) => {
  expect(env.engine.streaming, 'the engine streams (exec, attach, port-forward)').toBeDefined();
  const containers = new ContainersPage(app.page);
  await withPod(env, 'fwd-e2e', ['httpd', '-f', '-p', '8080', '-h', '/www'], async (pod) => {
    await app.pods.open(pod.podName);
    await containers.roomForDetail();
    await containers.open();
    await expect(containers.row(pod.containerName)).toContainText('running');
    const { hostPort, row } = await containers.forward(8080);
    await expect(row.getByRole('button', { name: 'Copy' })).toBeVisible();
    const res = await httpGet(hostPort, '/index.html');
    expect(res.status).toBe(200);
    expect(res.body).toBe('hello from podscope busybox\n');
    await app.screenshot('42-container-port-forward');

    await row.getByRole('button', { name: 'Close' }).click();
    await expect(row).toHaveCount(0);
    expect(await refused(hostPort)).toBe(true);

    // a forward left open goes away with the window's connection
    const second = await containers.forward(8080);
    expect((await httpGet(second.hostPort, '/')).status).toBe(200);
    await reloadApp(app.page);
    await expect.poll(() => refused(second.hostPort)).toBe(true);
    await expect.poll(() => hostExecsOf(pod.containerId)).toEqual([]);
  });
});
