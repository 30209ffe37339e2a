/** `podscope` — crictl-shaped sandbox verbs over Podscope's engine (or any CRI endpoint with --endpoint). */
import { isPodscopeError, serializeError } from '../../shared/domain/errors';
import { ENGINE_FLAGS_HELP } from './args';
import { EXIT_CODES } from './exit-codes';

interface Command {
  help: string;
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, () => Promise<Command>> = {
  runp: () => import('./commands/runp'),
  stopp: () => import('./commands/stopp'),
  rmp: () => import('./commands/rmp'),
  pods: () => import('./commands/pods'),
  inspectp: () => import('./commands/inspectp'),
  probe: () => import('./commands/probe'),
  throughput: () => import('./commands/throughput'),
  topology: () => import('./commands/topology'),
  cnicheck: () => import('./commands/cnicheck'),
  create: () => import('./commands/create'),
  start: () => import('./commands/start'),
  stop: () => import('./commands/stop'),
  rm: () => import('./commands/rm'),
  ps: () => import('./commands/ps'),
  inspect: () => import('./commands/inspect'),
  logs: () => import('./commands/logs'),
  exec: () => import('./commands/exec'),
  attach: () => import('./commands/attach'),
  'port-forward': () => import('./commands/port-forward'),
  run: () => import('./commands/run'),
  stats: () => import('./commands/stats'),
  serve: () => import('./commands/serve'),
  cri: () => import('./commands/cri'),
  pull: () => import('./commands/pull'),
  images: () => import('./commands/images'),
  rmi: () => import('./commands/rmi'),
  inspecti: () => import('./commands/inspecti'),
  load: () => import('./commands/load'),
  lab: () => import('./commands/lab'),
  info: () => import('./commands/info'),
};

function usage(): string {
  return `Usage: podscope COMMAND [flags]

Commands:
  runp CONFIG     run a pod sandbox from a crictl pod-config file (JSON or YAML)
  stopp ID...     stop pod sandboxes
  rmp ID...       remove pod sandboxes
  pods            list pod sandboxes
  inspectp ID...  show a sandbox: IPs, ports, bandwidth, CNI trace
  probe ID        measure reachability with real packets (host ports, pod ports, gateway, peers)
  create POD_ID CONTAINER_CONFIG POD_CONFIG   create a container in a pod
  start ID...     start containers
  stop ID...      stop containers (--timeout SECONDS)
  rm ID...        remove containers
  ps              list containers (-a for all)
  inspect ID...   show a container: state, exit reason, user, seccomp, log path
  logs ID         print a container's log (-f to follow)
  exec ID CMD     run a command in a container (-it: interactive terminal; -s: ExecSync)
  attach ID       attach to a container's stdio (-i, -t)
  port-forward POD [LOCAL:]REMOTE   forward a local port into the pod's network namespace
  run CONTAINER_CONFIG POD_CONFIG   run a pod and a container in it
  stats [ID...]   container CPU and memory from cgroups
  pull IMAGE      pull an image from a registry (--creds USER:PASS)
  images          list images (-q, -o json); images load FILE loads an OCI layout or docker save archive
  rmi IMAGE...    remove images
  inspecti IMAGE  show an image (config, layers) as JSON
  throughput ID   measure the pod's bandwidth limits with bulk TCP each way (past the tbf burst)
  topology ID     how the pod is wired, read from the kernel: veth peers, bridges, parents, routes, redirects, owners
  cnicheck ID     run CNI CHECK for the pod (and STATUS for the networks), recorded in its trace
  serve           browser mode: the Podscope UI on 127.0.0.1
  cri             serve the CRI runtime.v1 API on a unix socket
  lab run|diff|ls the CNI lab: dry-run a conflist in a throwaway netns, diff runs
  info            the engine: directories, runtime handlers (runc, crun) and their versions, problems

${ENGINE_FLAGS_HELP}
`;
}

/** `podscope --endpoint unix:///… pods`: flags written before the command are handed to it, as crictl allows. */
function commandFirst(argv: string[]): string[] {
  const leading: string[] = [];
  let i = 0;
  while (i < argv.length && argv[i]!.startsWith('--') && argv[i] !== '--help') {
    const flag = argv[i]!;
    const takesValue = !flag.includes('=') && i + 1 < argv.length && !argv[i + 1]!.startsWith('-') && !(argv[i + 1]! in COMMANDS);
    leading.push(...argv.slice(i, i + (takesValue ? 2 : 1)));
    i += takesValue ? 2 : 1;
  }
  return leading.length === 0 ? argv : [...argv.slice(i, i + 1), ...leading, ...argv.slice(i + 1)];
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = commandFirst(argv);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`podscope: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    return 2;
  }
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.help}\n\n${ENGINE_FLAGS_HELP}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (e) {
    const err = serializeError(e);
    process.stderr.write(`podscope ${name}: ${err.code}: ${err.message}\n`);
    if (process.env.PODSCOPE_DEBUG && err.details !== undefined) process.stderr.write(`${JSON.stringify(err.details, null, 2)}\n`);
    return isPodscopeError(e) ? EXIT_CODES[e.code] : 1;
  }
}
