/**
 * The containers suite on one runtime handler (runc or crun), each container under conmon: a real pod whose
 * runtime_handler names the handler, busybox containers created, started, logged in the CRI format by conmon,
 * exec'd (ExecSync, pipes, a terminal), attached (with and without a terminal, resized), their log reopened, updated,
 * stopped, noticed when they exit or are OOM-killed, kept running across an engine restart, and removed. The test file
 * owns the host resources and the engine; this runs the same tests per handler (tests/real/runtime-handlers-real.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../../electron/engine/service/engine';
import type { PodSandboxConfigInput } from '../../../shared/domain/config';
import type { ContainerConfigInput } from '../../../shared/domain/container';
import { hasCode } from '../../../shared/domain/errors';

// conmon writes the offset form of RFC3339Nano (+00:00), which the CRI format allows
export const CRI_LOG_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(Z|[+-]\d\d:\d\d) (stdout|stderr) [FP] /;

export class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, cb: () => void) {
    this.text += chunk.toString();
    cb();
  }
}

export async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

/** what the suite needs from its test file */
export interface HandlerSuiteHost {
  /** the engine under test (a new one after restartEngine) */
  engine(): SandboxEngine;
  /** closes the engine and opens another on the same dirs, as an app restart does */
  restartEngine(): Promise<void>;
  /** the engine's run dir (the handlers' roots are under <runDir>/containers) */
  runDir(): string;
  pod(name: string): PodSandboxConfigInput;
  container(name: string, command: string[], extra?: Partial<ContainerConfigInput>): ContainerConfigInput;
}

export function describeContainersOnHandler(handler: 'runc' | 'crun', h: HandlerSuiteHost): void {
  describe(`containers on the ${handler} handler`, () => {
    let podId: string;
    let seq = 0;
    const root = () => join(h.runDir(), 'containers', handler);

    async function start(command: string[], extra: Partial<ContainerConfigInput> = {}): Promise<string> {
      const { id } = await h.engine().createContainer({ podSandboxId: podId, config: h.container(`${handler}${seq++}`, command, extra) });
      await h.engine().startContainer(id);
      return id;
    }

    async function exited(id: string) {
      return until(
        'the exit',
        async () => {
          const s = await h.engine().containerStatus(id);
          return s.state === 'CONTAINER_EXITED' ? s : undefined;
        },
        15_000,
      );
    }

    beforeAll(async () => {
      ({ id: podId } = await h.engine().run({ config: h.pod(`p-${handler}`), runtimeHandler: handler }));
    });

    afterAll(async () => {
      if (podId)
        await h
          .engine()
          .remove(podId)
          .catch(() => undefined);
    });

    it('the pod remembers its handler; its container is made by that runtime under its own root, logs in CRI format', async () => {
      expect((await h.engine().status(podId)).runtimeHandler).toBe(handler);
      const id = await start(['sh', '-c', 'echo hello-out; echo hello-err >&2; exec sleep 100000']);
      const st = await h.engine().containerStatus(id);
      expect(st.state).toBe('CONTAINER_RUNNING');
      // the container's state is in the handler's root (crun and runc keep different formats there), not the other's
      expect(execFileSync(handler, ['--root', root(), 'list', '-q']).toString()).toContain(id);
      const other = handler === 'runc' ? 'crun' : 'runc';
      expect(existsSync(join(h.runDir(), 'containers', other, id))).toBe(false);
      const lines = await until('two log lines', () => {
        const l = readFileSync(st.logPath, 'utf8').split('\n').filter(Boolean);
        return l.length >= 2 ? l : undefined;
      });
      for (const l of lines) expect(l).toMatch(CRI_LOG_LINE);
      expect(lines.some((l) => / stdout F hello-out$/.test(l))).toBe(true);
      expect(lines.some((l) => / stderr F hello-err$/.test(l))).toBe(true);
      // the seccomp filter of RuntimeDefault applies on either runtime
      expect(/^Seccomp:\s+(\d)/m.exec(readFileSync(`/proc/${st.pid}/status`, 'utf8'))?.[1]).toBe('2');
      // the start's steps are this runtime's own commands, each timed, inside the step that spans them
      const startSteps = st.trace.filter((e) => e.phase === 'start');
      expect(startSteps.map((e) => [e.step, e.ok])).toEqual([
        ['conmon.create', true],
        [`${handler}.start`, true],
        ['runtime.start', true],
      ]);
      expect(startSteps[0]!.label).toContain(`${handler} create`);
    });

    it('ExecSync returns stdout, stderr and the exit code; a timeout is DeadlineExceeded', async () => {
      const id = await start(['sleep', '100000']);
      const r = await h.engine().execSync(id, ['sh', '-c', 'echo out; echo err >&2; exit 3'], 10);
      expect(Buffer.from(r.stdout).toString()).toBe('out\n');
      expect(Buffer.from(r.stderr).toString()).toBe('err\n');
      expect(r.exitCode).toBe(3);
      const err = await h
        .engine()
        .execSync(id, ['sleep', '5'], 1)
        .catch((e: unknown) => e);
      expect(hasCode(err, 'DeadlineExceeded')).toBe(true);
    });

    it("ExecSync runs as the container's user and groups (crun without --process would run it as root)", async () => {
      const id = await start(['sleep', '100000'], {
        linux: { security_context: { run_as_user: { value: 1001 }, supplemental_groups: [2002] } },
      });
      const r = await h.engine().execSync(id, ['id'], 10);
      const out = Buffer.from(r.stdout).toString();
      expect(out).toMatch(/^uid=1001\b/);
      expect(out).toMatch(/groups=.*\b2002\b/);
    });

    it('streaming exec: pipes carry stdin and keep stderr apart; a tty gives the process a terminal', async () => {
      const id = await start(['sleep', '100000']);
      const stdin = new PassThrough();
      const out = new Sink();
      const err = new Sink();
      const done = h.engine().streaming.exec({
        containerId: id,
        cmd: ['sh', '-c', 'cat; echo e >&2; exit 4'],
        stdin,
        stdout: out,
        stderr: err,
        tty: false,
      });
      stdin.end('piped\n');
      expect((await done).exitCode).toBe(4);
      expect(out.text).toBe('piped\n');
      expect(err.text).toBe('e\n');
      const ttyOut = new Sink();
      const r = await h.engine().streaming.exec({
        containerId: id,
        cmd: ['busybox', 'tty'],
        stdin: null,
        stdout: ttyOut,
        stderr: null,
        tty: true,
      });
      expect(r.exitCode).toBe(0);
      expect(ttyOut.text).toMatch(/\/dev\/pts\/\d+/);
    });

    it("attach goes through conmon's attach socket; a tty container gets its terminal from conmon, resized through its ctl fifo", async () => {
      const id = await start(['sh'], { stdin: true });
      const stdin = new PassThrough();
      const out = new Sink();
      const ac = new AbortController();
      const session = h
        .engine()
        .streaming.attach({ containerId: id, stdin, stdout: out, stderr: new Sink(), tty: false, signal: ac.signal });
      await until('the answer', () => {
        stdin.write(`echo hi-${handler}; echo oops >&2\n`);
        return out.text.includes(`hi-${handler}\n`) || undefined;
      });
      ac.abort();
      await session;
      const tty = await start(['sh'], { stdin: true, tty: true });
      const tin = new PassThrough();
      const tout = new Sink();
      const tac = new AbortController();
      const sizes: ((s: { width: number; height: number }) => void)[] = [];
      const resize = { subscribe: (l: (s: { width: number; height: number }) => void) => (sizes.push(l), () => undefined) };
      const tsession = h.engine().streaming.attach({
        containerId: tty,
        stdin: tin,
        stdout: tout,
        stderr: null,
        tty: true,
        resize,
        signal: tac.signal,
      });
      await until('a terminal of the size set', () => {
        for (const l of sizes) l({ width: 91, height: 19 });
        tin.write('busybox tty; busybox stty size\n');
        return /\/dev\/pts\/\d+\r\n/.test(tout.text) && /19 91/.test(tout.text) ? true : undefined;
      });
      tac.abort();
      await tsession;
      // conmon (not the runtime) holds the pty's master: the container's parent is conmon
      const { pid } = await h.engine().containerStatus(tty);
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      expect(readFileSync(`/proc/${ppid}/comm`, 'utf8').trim()).toBe('conmon');
      expect(readFileSync((await h.engine().containerStatus(tty)).logPath, 'utf8')).toMatch(/ stdout [FP] .*\/dev\/pts\/\d+/);
    });

    it('conmon watches the container (its parent) with a few MiB; ReopenContainerLog goes through its ctl fifo', async () => {
      const id = await start(['sh', '-c', 'i=0; while true; do echo tick$i; i=$((i+1)); sleep 0.1; done']);
      const st = await h.engine().containerStatus(id);
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${st.pid}/status`, 'utf8'))?.[1]);
      expect(readFileSync(`/proc/${ppid}/comm`, 'utf8').trim()).toBe('conmon');
      const rssKiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${ppid}/status`, 'utf8'))?.[1]);
      console.log(`conmon RSS (${handler}): ${(rssKiB / 1024).toFixed(1)} MiB`);
      await until('a tick', () => (readFileSync(st.logPath, 'utf8').includes('tick1') ? true : undefined));
      renameSync(st.logPath, `${st.logPath}.1`);
      await h.engine().reopenContainerLog(id);
      const fresh = await until('the fresh log', () =>
        existsSync(st.logPath) && readFileSync(st.logPath, 'utf8').includes('tick') ? readFileSync(st.logPath, 'utf8') : undefined,
      );
      for (const l of fresh.split('\n').filter(Boolean)) expect(l).toMatch(CRI_LOG_LINE);
      expect(readFileSync(`${st.logPath}.1`, 'utf8')).toMatch(/stdout F tick0/);
    });

    it('UpdateContainerResources reaches the running container cgroup', async () => {
      const id = await start(['sleep', '100000']);
      await h.engine().updateContainerResources(id, { cpu_shares: 512, memory_limit_in_bytes: 96 << 20 });
      const st = await h.engine().containerStatus(id);
      const path = (st.ociSpec as { linux: { cgroupsPath: string } }).linux.cgroupsPath;
      expect(readFileSync(`/sys/fs/cgroup/cpu/${path}/cpu.shares`, 'utf8').trim()).toBe('512');
      expect(readFileSync(`/sys/fs/cgroup/memory/${path}/memory.limit_in_bytes`, 'utf8').trim()).toBe(String(96 << 20));
    });

    it('stop sends SIGTERM, then SIGKILL after the timeout; an exit by itself and an OOM kill are noticed with their codes', async () => {
      const stubborn = await start(['sh', '-c', 'trap "echo got-term" TERM; echo ready; while true; do sleep 1; done']);
      const st0 = await h.engine().containerStatus(stubborn);
      await until('ready', () => (readFileSync(st0.logPath, 'utf8').includes('ready') ? true : undefined));
      await h.engine().stopContainer(stubborn, 1);
      expect(await h.engine().containerStatus(stubborn)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 137, reason: 'Error' });
      expect(readFileSync(st0.logPath, 'utf8')).toMatch(/stdout F got-term/);
      const quitter = await start(['sh', '-c', 'exit 7']);
      expect(await exited(quitter)).toMatchObject({ exitCode: 7, reason: 'Error' });
      const hog = await start(['dd', 'if=/dev/zero', 'of=/dev/null', 'bs=64M', 'count=4'], {
        linux: { resources: { memory_limit_in_bytes: 16 << 20 }, security_context: { seccomp: { profile_type: 0 } } },
      });
      // under conmon the container keeps its cgroup (and its OOM count) until it is deleted, on crun too
      expect(await exited(hog)).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
    });

    it('a container keeps running when the engine closes; a new engine sees it running, stops and removes it', async () => {
      const id = await start(['sleep', '100000']);
      const { pid } = await h.engine().containerStatus(id);
      await h.restartEngine();
      expect(existsSync(`/proc/${pid}`)).toBe(true);
      expect(await h.engine().containerStatus(id)).toMatchObject({ state: 'CONTAINER_RUNNING', pid });
      await h.engine().stopContainer(id, 0);
      expect(await h.engine().containerStatus(id)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 137 });
      await h.engine().removeContainer(id);
      // the runtime's delete finishes after the call returns (containers/remove.ts)
      await h.engine().removalsFinished();
      expect(execFileSync(handler, ['--root', root(), 'list', '-q']).toString()).not.toContain(id);
      await expect(h.engine().containerStatus(id)).rejects.toMatchObject({ code: 'NotFound' });
    });

    it('removing the pod removes its containers and their runtime state', async () => {
      const ids = (await h.engine().listContainers({ podSandboxId: podId })).map((c) => c.id);
      expect(ids.length).toBeGreaterThan(0);
      await h.engine().remove(podId);
      podId = '';
      await h.engine().removalsFinished();
      const left = execFileSync(handler, ['--root', root(), 'list', '-q']).toString();
      for (const id of ids) expect(left).not.toContain(id);
    });
  });
}
