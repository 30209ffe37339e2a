/**
 * The KernelReader over the engine's ProcessRunner: runs what the query asks for at once (iproute2 with -j, the
 * save tools, grep over /proc/sys) and parses it with the pure functions beside it.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import { describeCommand, type ProcessRunner } from '../os/exec';
import { kernelCommands, type KernelCommand } from './commands';
import { parseSave } from './netfilter';
import { isSysctlName, parseBridgePorts, parseFilters, parseLinks, parseQdiscs, parseRoutes, parseRules, parseSysctlLines } from './parse';
import { emptyKernelState, type KernelQuery, type KernelReadOptions, type KernelReader, type KernelState } from './types';

const DEFAULT_TIMEOUT_MS = 10_000;
const FAMILIES = [4, 6] as const;

export class LinuxKernelReader implements KernelReader {
  constructor(private readonly runner: ProcessRunner) {}

  async read(netns: string | undefined, query: KernelQuery, options: KernelReadOptions = {}): Promise<KernelState> {
    // validated before anything runs: a name is spliced into a /proc/sys path
    for (const name of query.sysctls ?? []) {
      if (!isSysctlName(name)) throw new PodscopeError('InvalidArgument', `sysctls: ${JSON.stringify(name)} is not a sysctl name`);
    }
    const state = emptyKernelState();
    const { errors } = state;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

    /** stdout, or undefined (and an error) when the command failed: exited non-zero unless `accept` says otherwise */
    const run = async (
      cmd: KernelCommand,
      accept: (r: { exitCode: number | null; stderr: string }) => boolean = (r) => r.exitCode === 0,
    ) => {
      const r = await this.runner
        .run({ file: cmd.file, args: cmd.args, timeoutMs, signal: options.signal })
        .catch((e: unknown) => ({ exitCode: -1, stdout: '', stderr: (e as Error).message }));
      if (!accept(r)) {
        errors.push(`${describeCommand(cmd.file, cmd.args)}: ${r.stderr.trim() || `exit ${String(r.exitCode)}`}`);
        return undefined;
      }
      return r.stdout;
    };
    const parsed = async <T>(cmd: KernelCommand, parse: (text: string) => T[]): Promise<T[]> => {
      const text = await run(cmd);
      if (text === undefined) return [];
      try {
        return parse(text);
      } catch (e) {
        errors.push(`${describeCommand(cmd.file, cmd.args)}: unparseable output: ${(e as Error).message}`);
        return [];
      }
    };
    const both = async <T>(read: (family: 4 | 6) => Promise<T[]>): Promise<T[]> => (await Promise.all(FAMILIES.map(read))).flat();

    const jobs: Array<Promise<void>> = [];
    if (query.links) jobs.push(parsed(kernelCommands.links(netns), parseLinks).then((v) => void (state.links = v)));
    if (query.routes) {
      const read = (f: 4 | 6) => parsed(kernelCommands.routes(f, netns), (t) => parseRoutes(t, f));
      jobs.push(both(read).then((v) => void (state.routes = v)));
    }
    if (query.rules) {
      const read = (f: 4 | 6) => parsed(kernelCommands.rules(f, netns), (t) => parseRules(t, f));
      jobs.push(both(read).then((v) => void (state.rules = v)));
    }
    if (query.qdiscs) {
      const devices = query.qdiscs === true ? [undefined] : query.qdiscs.devices;
      jobs.push(
        Promise.all(devices.map((dev) => parsed(kernelCommands.qdiscs(netns, dev), (t) => parseQdiscs(t, dev)))).then(
          (v) => void (state.qdiscs = v.flat()),
        ),
      );
    }
    if (query.bridgePorts) jobs.push(parsed(kernelCommands.bridgePorts(netns), parseBridgePorts).then((v) => void (state.bridgePorts = v)));
    if (query.ingressFilters) {
      const read = (dev: string) => parsed(kernelCommands.ingressFilters(dev, netns), (t) => parseFilters(t, dev));
      jobs.push(Promise.all(query.ingressFilters.devices.map(read)).then((v) => void (state.ingressFilters = v.flat())));
    }
    if (query.netfilter) {
      const tables = query.netfilter === true ? [undefined] : query.netfilter.tables;
      const read = (f: 4 | 6) =>
        Promise.all(tables.map((t) => parsed(kernelCommands.netfilter(f, netns, t), (text) => parseSave(text, f)))).then((v) => v.flat());
      jobs.push(both(read).then((v) => void (state.netfilter = v)));
    }
    const names = query.sysctls ?? [];
    if (names.length > 0) {
      // grep -s exits 2 for a missing file (and 1 when it printed nothing) without a word on stderr: the names not
      // printed are the errors; anything on stderr (nsenter could not enter the netns) fails the whole read
      const quietGrep = (r: { exitCode: number | null; stderr: string }) =>
        r.exitCode === 0 || ((r.exitCode === 1 || r.exitCode === 2) && !r.stderr.trim());
      jobs.push(
        run(kernelCommands.sysctls(names, netns), quietGrep).then((text) => {
          if (text === undefined) return;
          const values = parseSysctlLines(text);
          for (const name of names) {
            if (name in values) state.sysctls[name] = values[name]!;
            else errors.push(`sysctl ${name}: not readable in ${netns ?? 'the host netns'}`);
          }
        }),
      );
    }
    await Promise.all(jobs);
    return state;
  }
}
