/** `podscope` — crictl-shaped sandbox verbs over Podscope's engine (or any CRI endpoint with --endpoint). */
import { isPodscopeError, serializeError } from '../../shared/domain/errors';
import { ENGINE_FLAGS_HELP } from './args';
import { EXIT_CODES } from './exit-codes';

interface Command { help: string; run(argv: string[]): Promise<number> }

const COMMANDS: Record<string, () => Promise<Command>> = {
  runp: () => import('./commands/runp'),
  stopp: () => import('./commands/stopp'),
  rmp: () => import('./commands/rmp'),
  pods: () => import('./commands/pods'),
  inspectp: () => import('./commands/inspectp'),
  serve: () => import('./commands/serve'),
  cri: () => import('./commands/cri'),
  lab: () => import('./commands/lab'),
};

function usage(): string {
  return `Usage: podscope COMMAND [flags]

Commands:
  runp CONFIG     run a pod sandbox from a crictl pod-config file (JSON or YAML)
  stopp ID...     stop pod sandboxes
  rmp ID...       remove pod sandboxes
  pods            list pod sandboxes
  inspectp ID...  show a sandbox: IPs, ports, bandwidth, CNI trace
  serve           browser mode: the Podscope UI on 127.0.0.1
  cri             serve the CRI runtime.v1 API on a unix socket
  lab run|diff|ls the CNI lab: dry-run a conflist in a throwaway netns, diff runs

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

