/**
 * An offline environment for critest (kubernetes-sigs/cri-tools, built separately; nothing of it lives here):
 * builds critest's test images from this machine's static busybox, serves them from a registry on 127.0.0.1, starts
 * `podscope cri` with that registry as the mirror of registry.k8s.io, gcr.io and docker.io (so critest's image names
 * stay as written: RepoTags keep `registry.k8s.io/…`), prints the critest command, and cleans up on Ctrl-C.
 *
 *   npx tsx scripts/critest-env.ts --dir /tmp/x --bridge cni-crit0 --subnet 10.88.253.0/24 [--registry-port 0]
 *   … --containerd   the same images through Debian's containerd 1.6 instead (hosts.toml mirrors), for comparison
 *   … -- FLAGS…     anything after `--` is passed on to `podscope cri` (an engine flag: see `podscope cri --help`)
 *
 * Use a fresh --dir per run (pulled images stay in its state dir). Ctrl-C (SIGINT to the whole process group, as a
 * terminal sends it) or SIGTERM removes the pods left behind, the bridge and the shared portmap chains this run added.
 * The work runs in a process group of its own (see relay()), so the pods are removed through CRI while `podscope cri`
 * still serves, then it is stopped, and whatever a crashed or killed daemon left is removed by `podscope rmp` on its
 * state dir.
 *
 * The images are equivalents, not copies: what critest checks of them is their name, their USER, their /etc/passwd
 * and /etc/group, a web server on the expected port, a pid file, a setuid `Effective uid` printer (needs gcc -static).
 * The digest-pinned one (test-image-digest@sha256:…) cannot be rebuilt, so its spec fails here by design. So does
 * "runtime should support MaskedPaths": it masks /bin/ls and runs `sh -c ls`, and the static busybox's shell runs its
 * own ls applet without exec'ing /bin/ls (a standalone shell), so the mask is never met.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createCriEndpointApi } from '../electron/cri/client';
import { buildBusyboxImage, type BusyboxImageOptions } from '../testkit/busybox-image';
import { restoreHost, snapshotHost } from '../testkit/host-cleanup';
import { startTestRegistry } from '../testkit/registry';

const E2E = 'e2e-test-images';
const STAGING = 'k8s-staging-cri-tools';
const PASSWD = [
  'root:x:0:0:root:/root:/bin/sh',
  'www-data:x:33:33:www-data:/var/www:/bin/sh',
  'default-user:x:1000:1000:default-user:/home/default-user:/bin/sh',
  'nobody:x:65534:65534:nobody:/nonexistent:/bin/false',
  '',
].join('\n');
const GROUP = [
  'root:x:0:',
  'www-data:x:33:',
  'default-user:x:1000:',
  'group-defined-in-image:x:50000:default-user',
  'nogroup:x:65534:',
  '',
].join('\n');

/** path in the registry ⇒ tags ⇒ image options (every applet, the passwd/group above) */
function imageSpecs(dir: string, nnpBinary: string | undefined): { repo: string; tags: string[]; opts: BusyboxImageOptions }[] {
  const applets = execFileSync('/bin/busybox', ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const extra = hostBinaries(['ipcs', 'pgrep']);
  const base = (o: BusyboxImageOptions = {}): BusyboxImageOptions => ({
    applets,
    hardlinkApplets: true,
    ...o,
    hostFiles: { ...extra, ...o.hostFiles },
    files: { 'etc/passwd': PASSWD, 'etc/group': GROUP, 'var/run/.keep': '', 'var/www/index.html': 'ok\n', ...o.files },
  });
  const script = (name: string, lines: string[]) => {
    writeFileSync(join(dir, name), lines.join('\n'));
    return join(dir, name);
  };
  // nginx's stand-in: a process named nginx (pidof nginx) whose argv says "master process" (/proc/1/cmdline), its pid
  // in /var/run/nginx.pid, serving /var/www on the port; SIGTERM ends it at once
  const web = (port: number, logLine?: string): BusyboxImageOptions =>
    base({
      hostFiles: {
        'usr/sbin/nginx': {
          from: script(`nginx-${port}${logLine ? '-log' : ''}`, [
            '#!/bin/sh',
            ...(logLine ? [`echo "${logLine}" >&2`] : []),
            'echo $$ > /var/run/nginx.pid',
            "trap 'kill $child 2>/dev/null; exit 0' TERM INT",
            `httpd -f -p ${port} -h /var/www & child=$!`,
            'wait',
            '',
          ]),
          mode: 0o755,
        },
      },
      cmd: ['/usr/sbin/nginx', 'master process'],
      exposedPorts: [`${port}/tcp`],
    });
  const specs = [
    { repo: `${E2E}/busybox`, tags: ['1.29-2', '1.29-4'], opts: base() },
    { repo: `${E2E}/nginx`, tags: ['1.14-2'], opts: web(80) },
    { repo: `${E2E}/httpd`, tags: ['2.4.39-4'], opts: web(80, "Command line: 'httpd -D FOREGROUND'") },
    { repo: `${STAGING}/hostnet-nginx-${process.arch === 'x64' ? 'amd64' : process.arch}`, tags: ['latest'], opts: web(12003) },
    { repo: `${STAGING}/test-image-latest`, tags: ['latest'], opts: base({ files: { latest: 'latest' } }) },
    { repo: `${STAGING}/test-image-tag`, tags: ['test', 'all'], opts: base({ files: { tag: 'tag' } }) },
    { repo: `${STAGING}/test-image-tags`, tags: ['1', '2', '3'], opts: base({ files: { tags: 'tags' } }) },
    ...[1, 2, 3].map((i) => ({ repo: `${STAGING}/test-image-${i}`, tags: ['latest'], opts: base({ files: { [`image-${i}`]: `${i}` } }) })),
    { repo: `${STAGING}/test-image-user-uid`, tags: ['latest'], opts: base({ user: '1002' }) },
    { repo: `${STAGING}/test-image-user-username`, tags: ['latest'], opts: base({ user: 'www-data' }) },
    { repo: `${STAGING}/test-image-user-uid-group`, tags: ['latest'], opts: base({ user: '1003:1003' }) },
    { repo: `${STAGING}/test-image-user-username-group`, tags: ['latest'], opts: base({ user: 'www-data:www-data' }) },
    { repo: `${STAGING}/test-image-predefined-group`, tags: ['latest'], opts: base({ user: '1000' }) },
    { repo: 'library/busybox', tags: ['latest', '1.28'], opts: base() },
  ];
  if (nnpBinary)
    specs.push({
      repo: `${E2E}/nonewprivs`,
      tags: ['1.3'],
      opts: base({ hostFiles: { usr_nnp: { from: nnpBinary, mode: 0o4755 } }, entrypoint: ['/usr_nnp'], cmd: [] }),
    });
  return specs;
}

/**
 * Host programs busybox lacks (util-linux's ipcs for the IPC-namespace specs, procps' pgrep for the ExecSync-timeout
 * spec) with the shared libraries ldd lists, at the same paths in the image.
 */
function hostBinaries(names: string[]): Record<string, { from: string; mode: number }> {
  const files: Record<string, { from: string; mode: number }> = {};
  for (const name of names) {
    let path: string;
    try {
      path = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    } catch {
      process.stderr.write(`no ${name} on this machine: specs that run it will fail\n`);
      continue;
    }
    files[`usr/bin/${name}`] = { from: path, mode: 0o755 };
    for (const line of execFileSync('ldd', [path], { encoding: 'utf8' }).split('\n')) {
      const m = /(?:=>\s*)?(\/\S+)\s+\(/.exec(line);
      if (m) files[m[1]!.slice(1)] = { from: m[1]!, mode: 0o755 };
    }
  }
  return files;
}

/** A setuid-root program printing its effective uid (what the nonewprivs image does), when gcc can link statically. */
function buildNnp(dir: string): string | undefined {
  const src = join(dir, 'nnp.c');
  writeFileSync(src, '#include <stdio.h>\n#include <unistd.h>\nint main(void){printf("Effective uid: %d\\n",(int)geteuid());return 0;}\n');
  try {
    execFileSync('gcc', ['-static', '-O2', '-o', join(dir, 'nnp'), src], { stdio: 'ignore' });
    return join(dir, 'nnp');
  } catch {
    process.stderr.write('gcc -static failed: no nonewprivs image (its two specs will fail to pull)\n');
    return undefined;
  }
}

const MIRRORED = ['registry.k8s.io', 'gcr.io', 'docker.io'];

/**
 * The script runs as two processes. The one started from the terminal (through npx and tsx) only relays: it starts
 * the worker below in a process group of its own and passes a Ctrl-C on as a message. A terminal's Ctrl-C is SIGINT
 * to every process of its group, and the launchers do not wait for a clean-up: npx ends at once, and tsx SIGKILLs
 * its child when the child's report of the signal is late (30 ms, easily missed under load). The worker, out of
 * their reach, treats the relayed signal, its own SIGINT/SIGTERM, or the loss of its relay (killed) as the request
 * to stop, and cleans up whichever comes first.
 */
const WORKER_ENV = 'PODSCOPE_CRITEST_ENV_WORKER';
let stopping = false;
const stopRequested = new Promise<void>((resolve) => {
  const stop = (why: string) => {
    if (!stopping) process.stderr.write(`${why}: cleaning up\n`);
    stopping = true;
    resolve();
  };
  if (process.env[WORKER_ENV] !== '1') return;
  // later ones (an impatient second Ctrl-C) must not cut the clean-up short: the handlers stay
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
  process.on('message', (m: { stop?: string }) => stop(m.stop ?? 'stop'));
  process.on('disconnect', () => stop('relay gone'));
});
const untilSignal = () => stopRequested;

/** The same images through Debian's containerd 1.6 (hosts.toml mirrors), for a side-by-side critest run. */
async function serveContainerd(
  bridge: string,
  subnet: string,
  mirror: string,
  registry: { host: string; close(): Promise<void> },
): Promise<number> {
  const { startContainerd } = await import('../testkit/containerd-fixture');
  const ctd = await startContainerd({
    bridge,
    subnet: 0,
    ipv4Cidr: subnet,
    registryMirrors: Object.fromEntries(MIRRORED.map((h) => [h, mirror])),
    tempPrefix: 'pscr-ctd-',
  });
  process.stdout.write(
    `registry ${registry.host} (mirror of ${MIRRORED.join(', ')})\ncontainerd pid ${ctd.pid}, dir ${ctd.dir}\n\n` +
      `critest --runtime-endpoint unix://${ctd.socketPath} --image-endpoint unix://${ctd.socketPath}\n\nCtrl-C stops it.\n`,
  );
  await untilSignal();
  await ctd.stop();
  await registry.close();
  return 0;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      bridge: { type: 'string' },
      subnet: { type: 'string' },
      'registry-port': { type: 'string' },
      containerd: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || !values.dir || !values.bridge || !values.subnet) {
    process.stdout.write(
      'npx tsx scripts/critest-env.ts --dir DIR --bridge NAME --subnet A.B.C.0/24 [--registry-port N] [--containerd] [-- PODSCOPE-CRI-FLAGS…]\n',
    );
    return values.help ? 0 : 2;
  }
  const dir = values.dir;
  const hostBefore = snapshotHost();
  // images pulled by an earlier run stay in the state dir and would be used instead of this run's (ImageStatus hits)
  if (existsSync(join(dir, 'state', 'images')))
    process.stderr.write(`warning: ${dir}/state holds images from an earlier run; use a fresh --dir for this run's images\n`);
  mkdirSync(dir, { recursive: true });
  const registry = await startTestRegistry({ port: Number(values['registry-port'] ?? 0) });
  const nnp = buildNnp(dir);
  for (const spec of imageSpecs(dir, nnp)) {
    const image = buildBusyboxImage(spec.opts);
    for (const tag of spec.tags) registry.putImage(spec.repo, tag, image);
  }
  if (stopping) {
    await registry.close();
    return 130;
  }
  if (values.containerd) return serveContainerd(values.bridge, values.subnet, `http://${registry.host}`, registry);
  const confDir = join(dir, 'net.d');
  mkdirSync(confDir, { recursive: true });
  writeFileSync(
    join(confDir, `10-${values.bridge}.conflist`),
    JSON.stringify({
      cniVersion: '1.0.0',
      name: values.bridge,
      plugins: [
        {
          type: 'bridge',
          bridge: values.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', dataDir: join(dir, 'ipam'), ranges: [[{ subnet: values.subnet }]] },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    }),
  );
  const socket = join(dir, 'podscope.sock');
  const mirror = `http://${registry.host}`;
  const engineFlags = [
    '--state-dir',
    join(dir, 'state'),
    '--run-dir',
    join(dir, 'run'),
    '--cni-conf-dir',
    confDir,
    '--cni-cache-dir',
    join(dir, 'cni-cache'),
    // after `--` on this script's command line: engine flags for this run
    ...positionals,
  ];
  const args = [
    'bin/podscope.mjs',
    'cri',
    '--socket',
    socket,
    ...engineFlags,
    '--no-probe-on-ready',
    ...MIRRORED.flatMap((h) => ['--registry-mirror', `${h}=${mirror}`]),
  ];
  // a group of its own: a terminal's Ctrl-C goes to this script's group only, and the daemon stays up to be asked
  // to remove the pods (it would otherwise stop at once, leaving them and their netns, veths and rules)
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  // this script ending any other way (an uncaught error) must not leave the daemon running
  const killChild = () => child.exitCode === null && child.signalCode === null && child.kill('SIGTERM');
  process.once('exit', killChild);
  // the command is printed once the daemon serves: critest started on it earlier would fail to connect
  while (!existsSync(socket) && child.exitCode === null && child.signalCode === null && !stopping)
    await new Promise((r) => setTimeout(r, 100));
  process.stdout.write(
    `registry ${registry.host} (mirror of registry.k8s.io, gcr.io, docker.io)\npodscope cri pid ${child.pid}: node ${args.join(' ')}\n\n` +
      `critest --runtime-endpoint unix://${socket} --image-endpoint unix://${socket}\n` +
      `crictl --runtime-endpoint unix://${socket} --image-endpoint unix://${socket} ps -a\n\nCtrl-C stops it.\n`,
  );
  await Promise.race([stopRequested, new Promise((resolve) => child.once('exit', resolve))]);
  if (child.exitCode === null && child.signalCode === null) {
    // what critest left (a spec killed midway): pods go through CRI, so CNI DEL and runc delete run
    const api = createCriEndpointApi(socket, { connectTimeoutMs: 2000, callTimeoutMs: 60_000 });
    try {
      for (const s of await api.list())
        await api.remove(s.id).catch((e: unknown) => process.stderr.write(`remove ${s.id}: ${String(e)}\n`));
    } catch (e) {
      process.stderr.write(`listing pods: ${String(e)}\n`);
    }
    api.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  // what a daemon that crashed (or was killed) before removing its pods left: removed by an engine on its state dir
  const cli = (argv: string[]) => spawnSync(process.execPath, ['bin/podscope.mjs', ...argv, ...engineFlags], { encoding: 'utf8' });
  for (const id of cli(['pods', '-q']).stdout.split('\n').filter(Boolean)) {
    const r = cli(['rmp', '-f', id]);
    if (r.status !== 0) process.stderr.write(`rmp ${id}: ${r.stderr}`);
  }
  await registry.close();
  // the bridge (the bridge plugin never deletes it) and portmap's shared chains, if this run made them and no other
  // pod on the host needs them
  restoreHost(hostBefore, [values.bridge]);
  if (existsSync(join(dir, 'nnp.c'))) rmSync(join(dir, 'nnp.c'));
  return 0;
}

/** The process the terminal started: runs the worker (this same file) where a Ctrl-C cannot reach it. */
function relay(): void {
  const worker = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [WORKER_ENV]: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      if (worker.connected) worker.send({ stop: signal });
    });
  worker.once('exit', (code, signal) => process.exit(code ?? (signal ? 128 + osConstants.signals[signal] : 1)));
}

if (process.env[WORKER_ENV] === '1') {
  try {
    process.exitCode = await main();
  } finally {
    // the relay's channel would keep this process alive; closing it is no request to stop
    stopping = true;
    process.disconnect?.();
  }
} else relay();
