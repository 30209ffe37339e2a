/**
 * The log shim: a small detached Node process per container that owns the container's stdout/stderr, so container
 * output outlives the engine (a CLI command, an app restart). containerd has containerd-shim-runc-v2 and CRI-O has
 * conmon for this; Podscope runs this script with the engine's own Node (or Electron as Node) via `-e`, which needs
 * nothing built or installed. Why Node and not sh: the CRI log format needs nanosecond timestamps and a split of
 * long lines into P(artial) records, which busybox/dash cannot do without a helper.
 *
 * What it does: runs `runc run --keep` in the foreground with its stdout/stderr as pipes (runc hands its stdio to
 * the container when there is no terminal), so runc stays the container's parent and reaps it: runc's exit status
 * is the container's (128+N for a signal), which a process that is not a subreaper could not learn otherwise.
 * Each line becomes `<RFC3339Nano> <stdout|stderr> <F|P> <text>` in log_path; SIGUSR1 reopens log_path
 * (ReopenContainerLog after a rotation). It tells the engine the container's pid (or why runc failed) over the
 * IPC channel, then disconnects; when runc exits it writes exit.json atomically and exits.
 *
 * Attach (containerd's cio attach, conmon's attach socket): every container's shim also listens on `attach` in the
 * bundle dir (bound through /proc/self/fd/<dirfd>/attach, since the dir's path can exceed sun_path) and speaks the
 * framed protocol of runc-stream.ts: output is copied to every attached client as well as to the log (no history, as
 * containerd: "TODO: historical output"), client input goes to the container's stdin when it was created with stdin
 * (a pipe the shim holds; without stdin the container reads /dev/null and client input is dropped, as containerd's
 * attach ignores it). A client's end of input closes the container's stdin when the container is stdin_once without a
 * tty; otherwise it detaches that client (containerd internal/cri/io/container_io.go). With tty, runc runs under
 * `script` for a terminal (why: pty.ts); its output is one stream, logged as stdout; resizes go to that pty.
 *
 * Plain JavaScript in a string: it must run without tsx or a bundle, from a checkout and from the packaged app.
 * Node's start-up is most of a container start's cost here, so the runtime keeps one shim started ahead ("warm",
 * spawned at CreateContainer) that gets its config over IPC at StartContainer.
 */
export const SHIM_SOURCE = String.raw`
'use strict';
const fs = require('fs');
const { spawn } = require('child_process');
let started = false;
function main(cfg) {
  started = true;
  let connected = typeof process.send === 'function';
  const MAX_LINE = 16 * 1024;
  let logFd = -1;
  function openLog() {
    if (!cfg.logPath) return;
    const fd = fs.openSync(cfg.logPath, 'a', 0o640);
    const old = logFd;
    logFd = fd;
    if (old >= 0) fs.closeSync(old);
  }
  try { openLog(); } catch (e) { report({ error: 'cannot open log ' + cfg.logPath + ': ' + e.message }); process.exit(1); }
  process.on('SIGUSR1', () => { try { openLog(); } catch { /* keep the old file */ } });
  process.on('SIGTERM', () => { /* the engine never kills the shim; runc and the container decide when it ends */ });
  process.on('SIGINT', () => {});
  process.on('SIGHUP', () => {});

  const base = process.hrtime.bigint();
  const baseNs = BigInt(Date.now()) * 1000000n;
  function timestamp() {
    const ns = baseNs + (process.hrtime.bigint() - base);
    const s = ns / 1000000000n;
    const frac = (ns % 1000000000n).toString().padStart(9, '0');
    return new Date(Number(s) * 1000).toISOString().slice(0, 19) + '.' + frac + 'Z';
  }
  function frame(type, payload) {
    const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload || '');
    const head = Buffer.alloc(5);
    head.writeUInt8(type, 0);
    head.writeUInt32BE(body.length, 1);
    return Buffer.concat([head, body]);
  }
  const attached = new Set();
  const MAX_BEHIND = 8 * 1024 * 1024;
  function broadcast(stream, chunk) {
    if (attached.size === 0) return;
    const f = frame(stream === 'stderr' ? 2 : 1, chunk);
    // the container is never held back for an attached client; one that has fallen MAX_BEHIND behind is cut off
    // (its socket would otherwise buffer the container's output in this process without bound)
    for (const c of attached) {
      if (c.writableLength > MAX_BEHIND) { attached.delete(c); c.destroy(); continue; }
      try { c.write(f); } catch {}
    }
  }
  let ttyDevice = '';
  let wantedSize = null;
  let resizing = false;
  function resize(size) {
    if (!cfg.tty || !(size && size.width > 0 && size.height > 0)) return;
    wantedSize = size;
    if (resizing) return;
    resizing = true;
    const next = () => {
      if (!ttyDevice) { try { ttyDevice = fs.readFileSync(cfg.ttyFile, 'utf8').trim(); } catch {} }
      if (!ttyDevice || !wantedSize) { resizing = false; if (wantedSize) setTimeout(() => resize(wantedSize), 20); return; }
      const s = wantedSize;
      wantedSize = null;
      require('child_process').execFile('stty', ['-F', ttyDevice, 'rows', String(Math.floor(s.height)), 'cols', String(Math.floor(s.width))], next);
    };
    next();
  }
  function attachServer(child) {
    if (!cfg.attach) return attached;
    let stdinClosed = !cfg.stdin || !child.stdin;
    const closeStdin = () => { if (!stdinClosed) { stdinClosed = true; try { child.stdin.end(); } catch {} } };
    let dirFd = -1;
    try {
      dirFd = fs.openSync(cfg.bundle, 'r');
      try { fs.unlinkSync(cfg.bundle + '/attach'); } catch {}
      const server = require('net').createServer((c) => {
        attached.add(c);
        c.on('error', () => {});
        c.on('close', () => attached.delete(c));
        let buf = Buffer.alloc(0);
        c.on('data', (chunk) => {
          buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
          while (buf.length >= 5) {
            const len = buf.readUInt32BE(1);
            if (buf.length < 5 + len) break;
            const type = buf.readUInt8(0);
            const payload = buf.subarray(5, 5 + len);
            buf = buf.subarray(5 + len);
            if (type === 0) { if (!stdinClosed) child.stdin.write(payload); }
            else if (type === 4) {
              if (cfg.stdinOnce && !cfg.tty) closeStdin();
              else { attached.delete(c); c.end(); }
            } else if (type === 5) { try { resize(JSON.parse(payload.toString())); } catch {} }
          }
        });
      });
      server.on('error', () => {});
      server.listen('/proc/self/fd/' + dirFd + '/attach', () => { try { fs.closeSync(dirFd); } catch {} });
    } catch { if (dirFd >= 0) try { fs.closeSync(dirFd); } catch {} }
    return attached;
  }
  function write(stream, tag, text) {
    if (logFd < 0) return;
    const line = timestamp() + ' ' + stream + ' ' + tag + ' ' + text + '\n';
    try { fs.writeSync(logFd, line); } catch { /* a full disk must not kill the container's pipe reader */ }
  }
  function pump(readable, stream) {
    let pending = Buffer.alloc(0);
    readable.on('data', (chunk) => {
      broadcast(stream, chunk);
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let nl;
      while ((nl = pending.indexOf(10)) >= 0) {
        write(stream, 'F', pending.subarray(0, nl).toString('utf8'));
        pending = pending.subarray(nl + 1);
      }
      while (pending.length >= MAX_LINE) {
        write(stream, 'P', pending.subarray(0, MAX_LINE).toString('utf8'));
        pending = pending.subarray(MAX_LINE);
      }
    });
    return new Promise((resolve) => readable.on('close', () => {
      if (pending.length) write(stream, 'F', pending.toString('utf8'));
      resolve();
    }));
  }
  // settles once the engine has the report (or it cannot be sent): the shim must not exit before, or the message is lost
  let sent = Promise.resolve();
  function report(msg) {
    if (!connected) return;
    sent = new Promise((resolve) => {
      try { process.send(msg, () => { try { process.disconnect(); } catch {} resolve(); }); } catch { resolve(); }
    });
    connected = false;
  }
  // runKeep: runc's --keep (crun has none: its foreground run deletes the container's state when the process ends)
  const runcArgs = ['--root', cfg.root, '--log', cfg.runcLog, '--log-format', 'json', 'run'].concat(cfg.runKeep || ['--keep'], ['--bundle', cfg.bundle, '--pid-file', cfg.pidFile, cfg.id]);
  const q = (w) => "'" + String(w).replace(/'/g, "'\\''") + "'";
  // script gets a pipe even without stdin: at EOF on its stdin it would type an EOF character into the terminal
  const stdinMode = cfg.stdin || cfg.tty ? 'pipe' : 'ignore';
  // runWrap: what the runtime's run needs in front of it (oci-runtime.ts: crun on a hybrid cgroup host); it execs
  const argv = (cfg.runWrap || []).concat([cfg.runc], runcArgs);
  const runc = cfg.tty
    ? spawn(cfg.script || 'script', ['-q', '-f', '-e', '-E', 'never', '-c', 'tty > ' + q(cfg.ttyFile) + ' || exit 125; exec ' + argv.map(q).join(' '), '/dev/null'], {
        stdio: [stdinMode, 'pipe', 'pipe'],
        env: Object.assign({}, process.env, { SHELL: '/bin/sh' }),
      })
    : spawn(argv[0], argv.slice(1), { stdio: [stdinMode, 'pipe', 'pipe'] });
  if (runc.stdin) runc.stdin.on('error', () => {});
  const done = Promise.all([pump(runc.stdout, 'stdout'), pump(runc.stderr, cfg.tty ? 'stdout' : 'stderr')]);
  const clients = attachServer(runc);
  let exited = null;
  runc.on('error', (e) => { report({ error: 'cannot start ' + cfg.runc + ': ' + e.message }); exited = { code: 255 }; });
  const poll = setInterval(() => {
    let text = '';
    try { text = fs.readFileSync(cfg.pidFile, 'utf8').trim(); } catch { return; }
    const pid = Number.parseInt(text, 10);
    if (pid > 0) { clearInterval(poll); report({ pid, shimPid: process.pid }); }
  }, 3);
  runc.on('exit', (code, signal) => {
    exited = { code, signal };
    const finishedAtNs = (BigInt(Date.now()) * 1000000n).toString();
    clearInterval(poll);
    // a pid file means runc started the process, which then exited before the poll saw it: the start succeeded and
    // the container is simply done (containerd's StartContainer succeeds for a plain "true"; the exit comes as an event)
    let pid = 0;
    try { pid = Number.parseInt(fs.readFileSync(cfg.pidFile, 'utf8').trim(), 10) || 0; } catch {}
    if (pid > 0) report({ pid, shimPid: process.pid });
    else report({ error: 'runc run exited before the container started', exitCode: code, signal });
    // the pipes close when the last holder (the container or a child it left behind) is gone
    const finish = () => {
      const exitCode = code === null ? 128 + (require('os').constants.signals[signal] || 0) : code;
      const tmp = cfg.exitFile + '.tmp';
      fs.writeFileSync(tmp, JSON.stringify({ exitCode, signal, finishedAtNs }));
      fs.renameSync(tmp, cfg.exitFile);
      // attached clients learn the exit, then the shim goes once they have their last bytes (or after a second)
      const open = [...clients];
      if (open.length === 0) process.exit(0);
      let left = open.length;
      for (const c of open) {
        c.once('close', () => { if (--left === 0) process.exit(0); });
        try { c.end(frame(3, JSON.stringify({ exitCode }))); } catch { c.destroy(); }
      }
      setTimeout(() => process.exit(0), 1000);
    };
    const bounded = (p) => Promise.race([p, new Promise((r) => setTimeout(r, 2000))]);
    Promise.all([bounded(done), bounded(sent)]).then(finish, finish);
  });
}
// Either the config is the last argument, or the shim was started ahead of time ("warm") and gets it as its first
// IPC message; a warm shim whose engine goes away before that simply exits.
const arg = process.argv[process.argv.length - 1];
if (arg && arg.startsWith('{')) main(JSON.parse(arg));
else {
  process.once('message', (m) => main(m.cfg));
  process.once('disconnect', () => { if (!started) process.exit(0); });
}
`;
