/**
 * A terminal for `runc exec` / `runc run` with `process.terminal: true`, from plain Node.
 *
 * Why this shape: runc gives a terminal's master side either (a) over `--console-socket` as an SCM_RIGHTS message,
 * which Node cannot receive (no recvmsg with ancillary data; no native addon such as node-pty is installed and none
 * may be added), or (b) in the foreground, by creating the container's pty itself (inside the container's devpts, so
 * `tty` says /dev/pts/0) and copying it to and from its own stdio, sizing it from "the host console": the first of its
 * stderr/stdout/stdin that is a terminal, else /dev/tty. With Node's pipes there is no host console and runc refuses.
 * So runc runs under util-linux `script` (on every Debian: util-linux is Essential), which opens a host pty, makes it
 * the controlling terminal of `sh -c '…; exec runc …'` and relays the master to its own stdin/stdout (our pipes).
 * runc puts that host pty in raw mode (no echo, no line discipline on the way), so bytes pass through unchanged, and
 * the container's own pty does the terminal work.
 *
 * Resize: setting the host pty's window size (TIOCSWINSZ, via `stty -F <pts> rows R cols C`; Node has no ioctl)
 * makes the kernel send SIGWINCH to the pty's foreground process group — runc — which copies the size to the
 * container's pty (runc's tty.resize), and the kernel signals the container's process in turn. The shell writes the
 * pty's name to a file before exec'ing runc, so resizes know which device to size. Each stty is a process start
 * (~2 ms); resizes are rare (a window drag), and they are serialized so the last size wins.
 *
 * Rejected: a Python or C helper to receive the fd (a second language and a build step in the product); `runc exec
 * -d --console-socket` with a Node receiver (impossible, see above).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { TerminalSize } from './streaming';

/** shell-quotes one word for `sh -c` */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export interface PtyProcess {
  child: ChildProcess;
  /** sizes the terminal; safe to call before the process has its pty */
  resize(size: TerminalSize): void;
}

export interface PtySpawnOptions {
  /** where the shell writes the pty's device name (a file of the caller's, removed by the caller) */
  ttyFile: string;
  env: NodeJS.ProcessEnv;
  /** stdin 'ignore' ⇒ the terminal gets no input (script sees EOF and keeps relaying output) */
  stdin: 'pipe' | 'ignore';
  detached?: boolean;
  scriptPath?: string;
  sttyPath?: string;
}

/** `file args…` under a new pty; the child's stdout carries the terminal's output, its exit code is the command's. */
export function spawnWithPty(file: string, args: string[], opts: PtySpawnOptions): PtyProcess {
  const cmd = `tty > ${shellQuote(opts.ttyFile)} || exit 125; exec ${[file, ...args].map(shellQuote).join(' ')}`;
  // -q no banner, -f flush at once, -e the child's exit code, -E never: no echo before runc makes the pty raw
  const child = spawn(opts.scriptPath ?? 'script', ['-q', '-f', '-e', '-E', 'never', '-c', cmd, '/dev/null'], {
    stdio: [opts.stdin, 'pipe', 'pipe'],
    detached: opts.detached ?? false,
    // script runs the command with $SHELL -c
    env: { ...opts.env, SHELL: '/bin/sh' },
  });
  let device: string | undefined;
  let wanted: TerminalSize | undefined;
  let busy = false;
  const stty = opts.sttyPath ?? 'stty';
  const apply = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      for (let tries = 0; !device && tries < 100 && child.exitCode === null; tries++) {
        device = (await readFile(opts.ttyFile, 'utf8').catch(() => '')).trim() || undefined;
        if (!device) await new Promise((r) => setTimeout(r, 20));
      }
      while (device && wanted && child.exitCode === null) {
        const size = wanted;
        wanted = undefined;
        await new Promise<void>((resolve) =>
          execFile(stty, ['-F', device!, 'rows', String(size.height), 'cols', String(size.width)], () => resolve()),
        );
      }
    } finally {
      busy = false;
    }
    if (wanted && device && child.exitCode === null) void apply();
  };
  return {
    child,
    resize(size) {
      if (!(size.width > 0 && size.height > 0)) return;
      wanted = { width: Math.min(Math.floor(size.width), 65535), height: Math.min(Math.floor(size.height), 65535) };
      void apply();
    },
  };
}
