/**
 * The CNI lab: a conflist text dry-run in a throwaway netns (ADD, CHECK, DEL), what each plugin did and what the
 * kernel gained and kept, runs kept for diffing, and saving into the conf dir. Shapes shared by the engine, every
 * door and the page.
 */
import { z } from 'zod';
import type { SerializedError } from './errors';
import type { CniResult } from './cni';
import type { CniVerb } from './sandbox';
import type { ProbePath } from './probe';
import { lazySchema } from './lazy-schema';

/** Capability args the user picks for a run (the conventional camelCase forms, docs/semantics.md#capability-args). */
export const LabCapabilitiesSchema = lazySchema(() =>
  z.strictObject({
    portMappings: z
      .array(
        z.strictObject({
          hostPort: z.number().int().min(1).max(65535),
          containerPort: z.number().int().min(1).max(65535),
          protocol: z.enum(['tcp', 'udp', 'sctp']).default('tcp'),
          hostIP: z.string().max(64).optional(),
        }),
      )
      .max(64)
      .optional(),
    bandwidth: z
      .strictObject({
        ingressRate: z.number().int().min(0).optional(),
        ingressBurst: z.number().int().min(0).optional(),
        egressRate: z.number().int().min(0).optional(),
        egressBurst: z.number().int().min(0).optional(),
      })
      .optional(),
    dns: z
      .strictObject({
        servers: z.array(z.string().max(64)).max(8).optional(),
        searches: z.array(z.string().max(256)).max(8).optional(),
        options: z.array(z.string().max(64)).max(8).optional(),
      })
      .optional(),
    ips: z.array(z.string().max(64)).max(16).optional(),
    mac: z
      .string()
      .regex(/^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$/, 'not a MAC address')
      .optional(),
    cgroupPath: z.string().max(4096).optional(),
  }),
);
export type LabCapabilities = z.output<typeof LabCapabilitiesSchema>;

/** the most a conflist text may weigh (a real one is a few KiB) */
export const LAB_MAX_TEXT = 256 * 1024;
export const LabTextSchema = lazySchema(() => z.string().max(LAB_MAX_TEXT, 'conflist text over 256 KiB'));
export const LabRunIdSchema = lazySchema(() =>
  z
    .string()
    .min(1)
    .max(80)
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'not a lab run id'),
);

export const LabRunRequestSchema = lazySchema(() =>
  z.strictObject({
    text: LabTextSchema,
    capabilities: LabCapabilitiesSchema.default({}),
    /** run even though the conflist shares a bridge/subnet with live sandboxes */
    force: z.boolean().default(false),
    /** skip CHECK even when the version supports it */
    skipCheck: z.boolean().default(false),
    /** after ADD (and CHECK), measure reachability from the host into the throwaway netns before DEL */
    probe: z.boolean().default(false),
    /** tags this run's progress events */
    requestId: z.string().max(200).optional(),
  }),
);
export type LabRunRequest = z.input<typeof LabRunRequestSchema>;

export const LabSaveRequestSchema = lazySchema(() =>
  z.strictObject({
    text: LabTextSchema,
    /** a file name inside the conf dir (default `<network name>.conflist`) */
    fileName: z
      .string()
      .max(255)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*\.(conflist|conf|json)$/, 'a plain file name ending in .conflist, .conf or .json')
      .optional(),
  }),
);
export type LabSaveRequest = z.input<typeof LabSaveRequestSchema>;

export interface LabIssue {
  /** JSON path of the offending value ("" for the document, e.g. "plugins.0.ipam.ranges") */
  path: string;
  message: string;
  /** 1-based position in the text, when known (parse errors, and values the text locates) */
  line?: number;
  column?: number;
  /** offset in the text */
  offset?: number;
}

export interface LabPluginInfo {
  index: number;
  type: string;
  /** the binary `type` resolves to in the bin dirs (first regular file), or undefined when missing */
  binary?: string;
  /** the schema it was checked with; undefined for unknown types (envelope only) */
  schema?: string;
  capabilities: string[];
}

/** What a live sandbox shares with the conflist: the run would touch its network. */
export interface LabConflict {
  sandboxId: string;
  sandboxName: string;
  network: string;
  /** e.g. "bridge cni0", "subnet 10.88.0.0/16 overlaps 10.88.0.0/16", "pod IP 10.88.0.5 in 10.88.0.0/16" */
  shares: string[];
}

export interface LabValidation {
  ok: boolean;
  errors: LabIssue[];
  warnings: string[];
  name?: string;
  cniVersion?: string;
  plugins: LabPluginInfo[];
  /** live sandboxes whose network this conflist shares (a run needs `force`) */
  conflicts: LabConflict[];
  /** CHECK runs for cniVersion >= 0.4.0 unless disableCheck */
  checkSupported: boolean;
}

export interface LabPluginVersion {
  type: string;
  path: string;
  sha256: string;
  size: number;
  mtime: string;
}

export type LabPhase = 'ADD' | 'CHECK' | 'DEL';

export interface LabPluginTrace {
  phase: LabPhase;
  verb: CniVerb;
  index: number;
  type: string;
  binary?: string;
  stdin: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  durationMs: number;
  ok: boolean;
  error?: SerializedError;
  startedAt: string;
  /**
   * a CHECK run only because Podscope went past an earlier plugin's known defect (libcni would have stopped there):
   * the index of that plugin
   */
  pastKnownDefectOf?: number;
}

export type LabKernelKind =
  | 'netns-address'
  | 'netns-route'
  | 'netns-rule'
  | 'netns-link'
  | 'link'
  | 'host-address'
  | 'host-route'
  | 'host-rule'
  | 'iptables'
  | 'ip6tables'
  | 'qdisc'
  | 'ipam'
  | 'cache';

export interface LabKernelItem {
  kind: LabKernelKind;
  /** a normalised one-line description (iptables rules as `-S` prints them, prefixed by the table) */
  what: string;
}

export interface LabKept extends LabKernelItem {
  /** why the plugins keep it on purpose (shared between attachments) */
  why: string;
}

/**
 * A value a plugin changed in place rather than created: a sysctl, or a host link's state, name, MTU, master or
 * namespace (host-device moves a link into the pod and back). Compared between two snapshots.
 */
export interface LabKernelChange {
  /** the run's throwaway netns (removed with the run) or the host (shared: a change there outlives the run) */
  where: 'netns' | 'host';
  kind: 'sysctl' | 'link';
  /** the sysctl's name, or the link's name before the run */
  subject: string;
  /** "value" for a sysctl; state, up, name, mtu, master, mac or netns for a link */
  field: string;
  /** undefined: it did not exist */
  before?: string;
  after?: string;
  /** where `before` comes from when the thing did not exist yet (a new interface starts from the `default` sysctl) */
  beforeFrom?: string;
  /** the conflist's plugins that touch it, e.g. "tuning", "host-device" */
  owner?: string;
  /** why it stays changed by design: then it is not counted against the run */
  why?: string;
  /** one line, e.g. "host link plkhd0: state UP → DOWN" */
  text: string;
}

/** A plugin DELed after a failed ADD that never executed its own ADD (the chain stopped before it, or no binary). */
export interface LabNeverAdded {
  index: number;
  type: string;
  /** its DEL succeeded, as the CNI spec asks of a DEL for an ADD the plugin never saw */
  ok: boolean;
  /** what it said when it did not */
  error?: string;
}

/**
 * After a failed ADD the lab DELs the whole list in reverse, as libcni's DelNetworkList (and so containerd) does:
 * the plugins after the failure are DELed for an ADD they never saw. Podscope's own engine does less (`engine`).
 */
export interface LabDelAfterFailedAdd {
  /** the plugin whose ADD failed (-1 when the ADD failed before any plugin ran) */
  failedIndex: number;
  failedType: string;
  neverAdded: LabNeverAdded[];
  /** how Podscope's engine unwinds the same failure, for comparison */
  engine: string;
}

/** A plugin whose CHECK failed with a known defect of its installed release (docs/semantics.md#plugin-errors). */
export interface LabKnownDefect {
  index: number;
  type: string;
  version: string;
  reference: string;
  explanation: string;
}

/** one link a lab run created, with its MTU */
export interface LabLinkMtu {
  where: 'netns' | 'host';
  name: string;
  kind?: string;
  /** the bridge a host link is a port of */
  master?: string;
  mtu: number;
}

export interface LabRun {
  id: string;
  createdAt: string;
  /** the conflist text as run (never saved to the conf dir by a run) */
  text: string;
  name: string;
  cniVersion: string;
  capabilities: LabCapabilities;
  containerId: string;
  netns: string;
  ifName: string;
  plugins: LabPluginTrace[];
  versions: LabPluginVersion[];
  /** the final ADD result (1.x view), when ADD succeeded */
  result?: CniResult;
  /** the final ADD result as the list's version prints it */
  rawResult?: unknown;
  addOk: boolean;
  /** every plugin passed CHECK, or failed it only with a known defect of its release (then in `checkKnownDefects`) */
  checkOk?: boolean;
  /** the plugins whose CHECK failed with a known defect of the installed release: warnings, not the run's failure */
  checkKnownDefects?: LabKnownDefect[];
  /** CHECK was not run: why */
  checkSkipped?: string;
  /** every plugin that executed ADD was DELed (a never-added plugin's DEL is judged in delAfterFailedAdd) */
  delOk: boolean;
  /** the DEL after a failed ADD: which plugins were DELed for an ADD they never saw, and how each behaved */
  delAfterFailedAdd?: LabDelAfterFailedAdd;
  error?: SerializedError;
  /** what the run added to the kernel and disk (netns, host links, iptables, qdiscs, host-local, libcni cache) */
  kernelCreated: LabKernelItem[];
  /** what ADD created that is still there after DEL (a leak), empty when everything is gone */
  leftAfterDel: LabKernelItem[];
  /** what stays after DEL by the plugins' design (the bridge device, portmap's shared chains, host-local's cursor) */
  keptByDesign: LabKept[];
  /** values ADD changed in place (sysctls, host links), before → after ADD; absent on older records */
  changedByAdd?: LabKernelChange[];
  /**
   * values that differ after DEL from before ADD: what DEL did not put back (a host link left DOWN or renamed, a
   * sysctl left on). Those on the host without a `why` fail the run like a leak. Absent on older records.
   */
  changedAfterDel?: LabKernelChange[];
  /**
   * the conflist's bridges (with their addresses and qdiscs) as they were before ADD: the run used them but did not
   * create them (e.g. an earlier run left them, as the bridge plugin does by design). Absent on older records.
   */
  existedBefore?: LabKernelItem[];
  /** the MTU of every link the run created (its netns's interfaces, the host links ADD added); absent on older records */
  linkMtus?: LabLinkMtu[];
  /** the run's interface has a larger MTU than a host link on its path (a black hole for full-size packets) */
  mtuWarnings?: string[];
  /** conflicts the user overrode with force */
  forced: LabConflict[];
  /** run-specific names replaced by placeholders when diffing (container id, veth name, MACs, IPs, chain hashes) */
  tokens: Record<string, string>;
  /** kernel reads that failed (the verdict may then be incomplete) */
  snapshotErrors: string[];
  durationMs: number;
  /** the probe step's measurement, when the run asked for one and ADD succeeded */
  probe?: LabProbe;
  /** the probe was asked for but not run: why (e.g. ADD failed) */
  probeSkipped?: string;
  /** set on a run the engine was interrupted in and a later start-up tore down */
  recovered?: LabRecovery;
  /** true when ADD, CHECK (if run), the probe (if asked for) and DEL succeeded and nothing leaked */
  success: boolean;
}

/**
 * The optional probe step: TCP connects from the host to the netns's addresses (podPort paths, a responder inside
 * the netns answers with the run's nonce) and to each TCP port mapping's host port (hostPort paths, through portmap's
 * DNAT), measured after ADD and CHECK and before DEL.
 */
export interface LabProbe {
  /** RFC 3339: when the measurement started */
  measuredAt: string;
  measuredBy: string;
  durationMs: number;
  paths: ProbePath[];
  /** problems that kept paths from being measured */
  errors: string[];
  /** at least one path was measured and every applicable one was reachable */
  ok: boolean;
}

/** An interrupted run (the engine ended mid-run) that a later engine's start-up tore down. */
export interface LabRecovery {
  at: string;
  /** what start-up did, in order (e.g. "CNI DEL with the recorded conflist: ok", "netns unmounted and deleted") */
  actions: string[];
  /** the pid of the engine that was running it */
  interruptedPid: number;
}

export interface LabRunSummary {
  id: string;
  createdAt: string;
  name: string;
  cniVersion: string;
  pluginTypes: string[];
  success: boolean;
  addOk: boolean;
  leaked: number;
  durationMs: number;
}

export interface LabProgress {
  requestId?: string;
  runId: string;
  /** a plugin exec just finished, or the run moved on (e.g. "snapshot", "netns") */
  step: string;
  plugin?: LabPluginTrace;
  /** the probe step just finished */
  probe?: LabProbe;
}

/**
 * The after-DEL report, one line per difference from before ADD: what was created and left (leftAfterDel) and what
 * was changed and not put back (changedAfterDel), e.g. "policy rule 'ipv4 100: from 10.80.0.5 lookup 100' (in the
 * run's netns) created and left", "host link plkhd0: state UP → DOWN".
 */
export function afterDelReport(run: Pick<LabRun, 'leftAfterDel' | 'changedAfterDel'>): Array<{ text: string; leak: boolean }> {
  const noun: Partial<Record<LabKernelKind, string>> = {
    'netns-rule': 'policy rule',
    'host-rule': 'policy rule',
    'netns-route': 'route',
    'host-route': 'route',
    'netns-link': 'link',
    link: 'link',
    'netns-address': 'address',
    'host-address': 'address',
  };
  const left = run.leftAfterDel.map((i) => ({
    text: `${noun[i.kind] ?? i.kind} '${i.what}'${i.kind.startsWith('netns-') ? " (in the run's netns)" : ''} created and left`,
    leak: true,
  }));
  const changed = (run.changedAfterDel ?? []).map((c) => ({
    text: `${c.text}${c.where === 'netns' ? " (in the run's netns)" : ''}${c.why ? ` — ${c.why}` : ''}`,
    leak: c.where === 'host' && !c.why,
  }));
  return [...left, ...changed];
}

/** one changed JSON value */
export interface LabValueChange {
  path: string;
  a?: unknown;
  b?: unknown;
  change: 'added' | 'removed' | 'changed';
}

export interface LabPluginDiff {
  phase: LabPhase;
  index: number;
  type: string;
  /** "both", or the side that has it */
  present: 'both' | 'a' | 'b';
  stdin: LabValueChange[];
  result: LabValueChange[];
  stderr?: { a: string; b: string };
  exitCode?: { a: number | null; b: number | null };
  durationMs: { a?: number; b?: number };
  /** nothing differs but the duration */
  same: boolean;
}

/** a kernel fact one side created and the other found already there (a bridge an earlier run left): not a difference */
export interface LabExistedBefore extends LabKernelItem {
  createdBy: 'a' | 'b';
  why: string;
}

/**
 * A live pod's ADD to diff a run against: Podscope's own pods from their recorded plugin calls; another runtime's
 * pods rebuilt from libcni's cache (`fromCache`): each plugin's stdin from the cached conflist, CNI_ARGS and capability
 * args, and the ADD's final result — libcni keeps no per-plugin output, prevResult, stderr or exit code.
 */
export interface LabRecordedAdd {
  id: string;
  name: string;
  plugins: LabPluginTrace[];
  netns?: string;
  result?: unknown;
  /** the cache entry it was rebuilt from */
  fromCache?: string;
}

export interface LabDiff {
  a: { kind: 'run' | 'sandbox'; id: string; label: string };
  b: { kind: 'run' | 'sandbox'; id: string; label: string };
  plugins: LabPluginDiff[];
  /** kernel items created only by a / only by b (after normalisation); undefined when a side has no kernel record */
  kernel?: { onlyA: LabKernelItem[]; onlyB: LabKernelItem[]; existedBefore?: LabExistedBefore[] };
  leftAfterDel?: { onlyA: LabKernelItem[]; onlyB: LabKernelItem[] };
  result: LabValueChange[];
  notes: string[];
}

export const LabDiffRequestSchema = lazySchema(() =>
  z.strictObject({
    a: LabRunIdSchema,
    /** a run id, `sandbox:<id>` for a live pod's recorded ADD, or `endpoint:<endpoint id>:<sandbox id>` for a CRI endpoint's pod's ADD as libcni's cache keeps it */
    b: z.string().min(1).max(420),
  }),
);

export interface LabSaveResult {
  path: string;
  backup?: string;
  warning: string;
}

/** shown before a save and returned with it */
export const LAB_SAVE_WARNING =
  'The engine watches the conf dir and reloads at once: new pods use this network immediately. Any other runtime watching the same directory (containerd, CRI-O) picks it up at once too.';

export interface LabApi {
  validate(text: string): Promise<LabValidation>;
  run(req: LabRunRequest, onProgress?: (p: LabProgress) => void): Promise<LabRun>;
  list(): Promise<LabRunSummary[]>;
  get(id: string): Promise<LabRun>;
  diff(a: string, b: string): Promise<LabDiff>;
  /** run `a` against an ADD read elsewhere (another runtime's pod, from libcni's cache) */
  diffWithAdd?(a: string, b: LabRecordedAdd): Promise<LabDiff>;
  save(req: LabSaveRequest): Promise<LabSaveResult>;
  subscribe(listener: (p: LabProgress) => void): () => void;
}
