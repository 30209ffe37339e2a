/** `podscope` — crictl-shaped sandbox verbs over Podscope's engine (or any CRI endpoint with --endpoint). */
import { isPodscopeError, serializeError } from '../../shared/domain/errors';
import { ENGINE_FLAGS_HELP } from '../core/engine-flag-table';
import { commandFirst } from './command-line';
import { EXIT_CODES } from './exit-codes';

interface Command {
  help: string;
  /** words a command takes as its first argument to choose what it does (`images load`, `lab run`) */
  subcommands?: readonly string[];
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
  nodes: () => import('./commands/nodes'),
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
  nodes           every CRI runtime on this machine as a node (kind-shaped nodes in namespaces too)

${ENGINE_FLAGS_HELP}
`;
}

const isCommand = (w: string) => w in COMMANDS;

/**
 * The verb a command line runs (`help` for none or an unknown one): the bundle's loader keys its code cache by it,
 * folding each verb's compiled code in on that verb's first run (bin/bundle-loader.mjs).
 */
export function verbOf(argv: string[]): string {
  const name = commandFirst(argv, isCommand, () => [])[0];
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? name : 'help';
}

export async function main(argv: string[]): Promise<number> {
  const name = commandFirst(argv, isCommand, () => [])[0];
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  if (!(name in COMMANDS)) {
    process.stderr.write(`podscope: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    return 2;
  }
  // loaded first: where the flags written before it go depends on its subcommands
  const loaded = await COMMANDS[name]!();
  const [, ...rest] = commandFirst(argv, isCommand, () => loaded.subcommands ?? []);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${loaded.help}\n\n${ENGINE_FLAGS_HELP}\n`);
    return 0;
  }
  try {
    return await loaded.run(rest);
  } catch (e) {
    const err = serializeError(e);
    process.stderr.write(`podscope ${name}: ${err.code}: ${err.message}\n`);
    if (process.env.PODSCOPE_DEBUG && err.details !== undefined) process.stderr.write(`${JSON.stringify(err.details, null, 2)}\n`);
    return isPodscopeError(e) ? EXIT_CODES[e.code] : 1;
  }
}
