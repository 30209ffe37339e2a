/**
 * `podscope lab run|diff|ls`: the CNI lab from a terminal. It opens a read-only engine (no lock, so it works beside a
 * daemon on the same dirs) only to see which live pods a conflist would touch; the run itself uses its own netns.
 */
import { readFile } from 'node:fs/promises';
import { PodscopeError, notSupported } from '../../../shared/domain/errors';
import { parseRateInput } from '../../../shared/domain/bandwidth';
import {
  afterDelReport,
  LabCapabilitiesSchema,
  type LabApi,
  type LabDiff,
  type LabIssue,
  type LabKernelItem,
  type LabRun,
} from '../../../shared/domain/lab';
import { formatIssues } from '../../../shared/domain/config';
import { engineOptionsFromFlags, parseCommandArgs, type Flags } from '../args';
import { table } from '../format';
import { withForeignMeasurer } from '../api';

export const help = `podscope lab run FILE [--port-mapping HOST:CONTAINER[/tcp|udp|sctp]]... [--bandwidth RATE|IN,OUT] [--dns-server IP]...
                 [--ip IP]... [--mac MAC] [--cgroup-path P] [--force] [--skip-check] [--probe] [-o json]
  Dry-runs a conflist in a throwaway netns: ADD, CHECK (cniVersion >= 0.4.0), DEL; prints each plugin's exec, the
  kernel state the run created and what DEL left. Exit 0 when ADD, CHECK and DEL succeeded and nothing leaked.
  --probe: after ADD and CHECK, TCP connects from the host to the netns's addresses and to each TCP port mapping's
  host port (a responder in the netns answers); every path must be reachable for exit 0. DEL runs either way.
  Bandwidth rates are bits per second as Kubernetes quantities (10M, 1Gi, 500k; 0 = unshaped). --force runs even when live pods share the bridge/subnet.
podscope lab diff RUN_A RUN_B|sandbox:ID [-o json]   per-plugin differences of two runs (or a run and a pod's ADD)
podscope lab diff RUN_A [sandbox:]ID --endpoint unix://SOCKET [--endpoint-cni-cache DIR] [-o json]
                                                     a run against a CRI endpoint's pod, its ADD as libcni's cache keeps it
podscope lab ls [-o json]                            the kept runs, newest first`;

async function withLab<T>(flags: Flags, fn: (lab: LabApi) => Promise<T>): Promise<T> {
  if (typeof flags.endpoint === 'string') throw notSupported('lab', 'the CNI lab runs on the local engine only, not over a CRI endpoint');
  const { createEngine } = await import('../../engine/api');
  const engine = await createEngine(engineOptionsFromFlags(flags), { readOnly: true });
  try {
    if (!engine.lab) throw new PodscopeError('Unavailable', 'the engine has no lab');
    return await fn(engine.lab);
  } finally {
    await engine.close();
  }
}

function parsePortMapping(s: string): { hostPort: number; containerPort: number; protocol: string } {
  const m = /^(\d+):(\d+)(?:\/(tcp|udp|sctp))?$/i.exec(s);
  if (!m) throw new PodscopeError('InvalidArgument', `--port-mapping must be HOST:CONTAINER[/tcp|udp|sctp], not ${JSON.stringify(s)}`);
  return { hostPort: Number(m[1]), containerPort: Number(m[2]), protocol: (m[3] ?? 'tcp').toLowerCase() };
}

/** RATE (both directions) or IN,OUT, each a quantity in bit/s as the annotations take it (10M, 1Gi, 500k, 0 = unshaped). */
export function parseBandwidth(s: string): { ingressRate: number; egressRate: number } {
  const parts = s.split(',');
  if (parts.length > 2 || parts.some((p) => p.trim() === ''))
    throw new PodscopeError('InvalidArgument', `--bandwidth must be RATE or IN,OUT (e.g. 10M or 10M,5M), not ${JSON.stringify(s)}`);
  const [ingress, egress] = parts.map((p) => {
    const r = parseRateInput(p);
    if ('error' in r) throw new PodscopeError('InvalidArgument', `--bandwidth ${r.error}`);
    return r.bitsPerSecond;
  });
  return { ingressRate: ingress!, egressRate: egress ?? ingress! };
}

const items = (xs: LabKernelItem[]) => xs.map((i) => `    ${i.kind.padEnd(13)} ${i.what}`).join('\n');

/** The JSON the issue promises: plugins[], result, kernelCreated, leftAfterDel (plus the rest of the record). */
export function runJson(run: LabRun): Record<string, unknown> {
  return {
    id: run.id,
    success: run.success,
    plugins: run.plugins.map((p) => ({
      type: p.type,
      verb: p.verb,
      index: p.index,
      exitCode: p.exitCode,
      durationMs: Math.round(p.durationMs * 10) / 10,
      stdin: p.stdin,
      stdout: p.stdout,
      stderr: p.stderr,
      ...(p.pastKnownDefectOf !== undefined ? { pastKnownDefectOf: p.pastKnownDefectOf } : {}),
    })),
    result: run.rawResult ?? null,
    kernelCreated: run.kernelCreated,
    leftAfterDel: run.leftAfterDel,
    keptByDesign: run.keptByDesign,
    linkMtus: run.linkMtus ?? [],
    mtuWarnings: run.mtuWarnings ?? [],
    changedByAdd: run.changedByAdd ?? [],
    changedAfterDel: run.changedAfterDel ?? [],
    addOk: run.addOk,
    checkOk: run.checkOk ?? null,
    checkKnownDefects: run.checkKnownDefects ?? [],
    checkSkipped: run.checkSkipped ?? null,
    delOk: run.delOk,
    ...(run.delAfterFailedAdd ? { delAfterFailedAdd: run.delAfterFailedAdd } : {}),
    error: run.error ?? null,
    versions: run.versions,
    ...(run.probe ? { probe: run.probe } : {}),
    ...(run.probeSkipped ? { probe: { skipped: run.probeSkipped } } : {}),
    durationMs: Math.round(run.durationMs),
  };
}

function printRun(run: LabRun): void {
  const lines = [`lab run ${run.id}  ${run.name} (cniVersion ${run.cniVersion})`];
  const defects = new Map((run.checkKnownDefects ?? []).map((d) => [d.index, d]));
  for (const p of run.plugins) {
    // a CHECK failing with a known defect of its release is a warning; the plugins after it were checked past it
    const defect = p.verb === 'CHECK' && !p.ok ? defects.get(p.index) : undefined;
    const outcome = p.ok
      ? ''
      : defect
        ? `  KNOWN DEFECT of ${p.type} ${defect.version}: ${p.error?.message ?? p.stderr.trim()}`
        : `  FAILED: ${p.error?.message ?? p.stderr.trim()}`;
    const past = p.pastKnownDefectOf !== undefined ? `  (checked past #${p.pastKnownDefectOf}'s known defect; libcni stops there)` : '';
    lines.push(
      `  ${p.verb.padEnd(5)} ${p.type.padEnd(12)} exit ${String(p.exitCode ?? '-').padEnd(4)} ${p.durationMs.toFixed(1).padStart(7)} ms${outcome}${past}`,
    );
  }
  if (run.checkSkipped) lines.push(`  CHECK skipped: ${run.checkSkipped}`);
  for (const d of run.checkKnownDefects ?? [])
    lines.push(`  CHECK ok, with a known plugin defect: ${d.type}#${d.index} ${d.version} (${d.reference}): ${d.explanation}`);
  if (run.probe) {
    lines.push(
      `  PROBE ${run.probe.ok ? 'ok' : 'FAILED'} at ${run.probe.measuredAt} (${run.probe.measuredBy}, ${Math.round(run.probe.durationMs)} ms):`,
    );
    for (const p of run.probe.paths)
      lines.push(
        `    ${p.kind.padEnd(8)} ${p.from} → ${p.to}/${p.proto}  ${p.verdict}${p.rttMs !== undefined ? ` (${p.rttMs} ms)` : ''}${p.measured ? '' : ' (not measured)'}  ${p.note}`,
      );
    for (const e of run.probe.errors) lines.push(`    probe error: ${e}`);
  }
  if (run.probeSkipped) lines.push(`  PROBE skipped: ${run.probeSkipped}`);
  if (run.recovered) lines.push(`  recovered at start-up ${run.recovered.at}: ${run.recovered.actions.join('; ')}`);
  if (run.error) lines.push(`  error: ${run.error.message}`);
  const after = run.delAfterFailedAdd;
  if (after) {
    lines.push(`  DEL after the failed ADD of ${after.failedType || 'the list'}: the whole list in reverse, as libcni/containerd do`);
    for (const n of after.neverAdded)
      lines.push(`    ${n.type}#${n.index} DELed for an ADD it never saw: ${n.ok ? 'succeeded' : `failed: ${n.error ?? ''}`}`);
    lines.push(`  ${after.engine}`);
  }
  lines.push(`  kernel state created (${run.kernelCreated.length}):`, items(run.kernelCreated));
  if (run.linkMtus?.length)
    lines.push(
      `  links created, with their MTU:`,
      ...run.linkMtus.map(
        (l) => `    ${l.where.padEnd(6)} ${l.name}${l.kind ? ` (${l.kind}${l.master ? ` in ${l.master}` : ''})` : ''}  MTU ${l.mtu}`,
      ),
    );
  for (const w of run.mtuWarnings ?? []) lines.push(`  !  MTU: ${w}`);
  if (run.keptByDesign.length)
    lines.push(
      `  kept after DEL by design (${run.keptByDesign.length}):`,
      ...run.keptByDesign.map((k) => `    ${k.kind.padEnd(13)} ${k.what}  (${k.why})`),
    );
  if (run.changedByAdd?.length)
    lines.push(
      `  changed by ADD (${run.changedByAdd.length}):`,
      ...run.changedByAdd.map((c) => `    ${c.text}${c.owner ? `  [${c.owner}]` : ''}`),
    );
  const notPutBack = afterDelReport({ leftAfterDel: [], changedAfterDel: run.changedAfterDel }).filter((r) => r.leak);
  lines.push(
    run.leftAfterDel.length === 0
      ? `  leak verdict: everything the run created is gone${notPutBack.length ? `, but DEL did not put back (${notPutBack.length}):` : ''}`
      : `  leak verdict: LEFT after DEL (${run.leftAfterDel.length}):\n${items(run.leftAfterDel)}`,
    ...notPutBack.map((r) => `    ${r.text}`),
  );
  const byDesign = (run.changedAfterDel ?? []).filter((c) => c.where === 'netns' || c.why);
  if (byDesign.length)
    lines.push(
      `  changed after DEL, not a leak (${byDesign.length}):`,
      ...byDesign.map((c) => `    ${c.text}${c.why ? ` — ${c.why}` : " (the run's netns, removed with it)"}`),
    );
  lines.push(`  ${run.success ? 'ok' : 'FAILED'} in ${Math.round(run.durationMs)} ms`);
  process.stdout.write(`${lines.filter((l) => l !== '').join('\n')}\n`);
}

function printDiff(d: LabDiff): void {
  const lines = [`a: ${d.a.label}`, `b: ${d.b.label}`];
  for (const p of d.plugins) {
    const head = `${p.phase} #${p.index} ${p.type}`;
    if (p.present !== 'both') {
      lines.push(`${head}: only in ${p.present}`);
      continue;
    }
    lines.push(`${head}: ${p.same ? 'same' : 'differs'} (${p.durationMs.a?.toFixed(1)} ms vs ${p.durationMs.b?.toFixed(1)} ms)`);
    for (const c of p.stdin) lines.push(`    stdin  ${c.path}: ${JSON.stringify(c.a)} → ${JSON.stringify(c.b)}`);
    for (const c of p.result) lines.push(`    result ${c.path}: ${JSON.stringify(c.a)} → ${JSON.stringify(c.b)}`);
    if (p.exitCode) lines.push(`    exit   ${p.exitCode.a} → ${p.exitCode.b}`);
    if (p.stderr) lines.push(`    stderr ${JSON.stringify(p.stderr.a)} → ${JSON.stringify(p.stderr.b)}`);
  }
  if (d.kernel) {
    for (const i of d.kernel.onlyA) lines.push(`kernel - ${i.kind} ${i.what}`);
    for (const i of d.kernel.onlyB) lines.push(`kernel + ${i.kind} ${i.what}`);
    for (const i of d.kernel.existedBefore ?? []) lines.push(`kernel = ${i.kind} ${i.what}  (${i.why})`);
  }
  for (const n of d.notes) lines.push(`note: ${n}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** A refused conflist names its first problem; the terminal gets every one, each at FILE:LINE:COLUMN. */
function withEveryIssue(e: unknown, file: string): unknown {
  const issues = e instanceof PodscopeError && (e.details as { errors?: LabIssue[] } | undefined)?.errors;
  if (!issues || issues.length < 2) return e;
  const lines = issues.map(
    (i) => `  ${file}${i.line !== undefined ? `:${i.line}:${i.column}` : ''}: ${i.path ? `${i.path}: ` : ''}${i.message}`,
  );
  return new PodscopeError((e as PodscopeError).code, `${(e as PodscopeError).message}\n${lines.join('\n')}`, {
    details: (e as PodscopeError).details,
  });
}

export const subcommands = ['run', 'diff', 'ls'] as const;

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const common = { output: { type: 'string', short: 'o' } } as const;
  if (sub === 'run') {
    const { flags, positionals } = parseCommandArgs(rest, {
      ...common,
      'port-mapping': { type: 'string', multiple: true },
      bandwidth: { type: 'string' },
      'dns-server': { type: 'string', multiple: true },
      ip: { type: 'string', multiple: true },
      mac: { type: 'string' },
      'cgroup-path': { type: 'string' },
      force: { type: 'boolean' },
      'skip-check': { type: 'boolean' },
      probe: { type: 'boolean' },
    });
    if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'lab run takes exactly one conflist file');
    const file = positionals[0]!;
    const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
      throw new PodscopeError('InvalidArgument', `cannot read ${file}: ${e.code ?? e.message}`);
    });
    const caps = LabCapabilitiesSchema.safeParse({
      ...(flags['port-mapping'] ? { portMappings: (flags['port-mapping'] as string[]).map(parsePortMapping) } : {}),
      ...(typeof flags.bandwidth === 'string' ? { bandwidth: parseBandwidth(flags.bandwidth) } : {}),
      ...(flags['dns-server'] ? { dns: { servers: flags['dns-server'] } } : {}),
      ...(flags.ip ? { ips: flags.ip } : {}),
      ...(typeof flags.mac === 'string' ? { mac: flags.mac } : {}),
      ...(typeof flags['cgroup-path'] === 'string' ? { cgroupPath: flags['cgroup-path'] } : {}),
    });
    if (!caps.success) throw new PodscopeError('InvalidArgument', formatIssues(caps.error).join('; '));
    const result = await withLab(flags, (lab) =>
      lab.run({
        text,
        capabilities: caps.data,
        force: flags.force === true,
        skipCheck: flags['skip-check'] === true,
        probe: flags.probe === true,
      }),
    ).catch((e: unknown) => {
      throw withEveryIssue(e, file);
    });
    if (flags.output === 'json') process.stdout.write(`${JSON.stringify(runJson(result), null, 2)}\n`);
    else printRun(result);
    return result.success ? 0 : 1;
  }
  if (sub === 'diff') {
    const { flags, positionals } = parseCommandArgs(rest, common);
    if (positionals.length !== 2) throw new PodscopeError('InvalidArgument', 'lab diff takes two run ids (or a run id and sandbox:ID)');
    const [a, b] = positionals as [string, string];
    const d =
      typeof flags.endpoint === 'string'
        ? // b is a pod of that endpoint: its ADD from libcni's cache, compared with a run of this engine's lab
          await withLab({ ...flags, endpoint: undefined }, async (lab) =>
            lab.diffWithAdd!(a, await withForeignMeasurer(flags, (m) => m.recordedAdd(b.replace(/^sandbox:/, '')))),
          )
        : await withLab(flags, (lab) => lab.diff(a, b));
    if (flags.output === 'json') process.stdout.write(`${JSON.stringify(d, null, 2)}\n`);
    else printDiff(d);
    return 0;
  }
  if (sub === 'ls') {
    const { flags } = parseCommandArgs(rest, common);
    const runs = await withLab(flags, (lab) => lab.list());
    if (flags.output === 'json') process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    else
      process.stdout.write(
        `${table(
          ['RUN', 'CREATED', 'NETWORK', 'PLUGINS', 'RESULT', 'LEAKED', 'MS'],
          runs.map((r) => [
            r.id,
            r.createdAt,
            r.name,
            r.pluginTypes.join(','),
            r.success ? 'ok' : r.addOk ? 'failed' : 'add failed',
            String(r.leaked),
            String(Math.round(r.durationMs)),
          ]),
        )}\n`,
      );
    return 0;
  }
  throw new PodscopeError('InvalidArgument', `lab needs a subcommand: run, diff or ls\n\n${help}`);
}
