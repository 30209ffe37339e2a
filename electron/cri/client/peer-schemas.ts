/**
 * What a CRI peer sends in its JSON side channels is untrusted: any socket can say `runtimeName: "podscope"`. These
 * schemas check the documents the client turns into views — the Podscope sandbox-status section, Podscope's CNI
 * config and engine info from Status verbose, the containerd-shaped fields of PodSandboxStatus verbose — so a
 * malformed one is a clear error (decodePeerJson) instead of a crash or a half-built view. Each Podscope schema is
 * typed against the view it produces, so a change to the view that the schema misses does not compile.
 * Unknown keys are dropped.
 */
import { z } from 'zod';
import { ERROR_CODES, PodscopeError, type SerializedError } from '../../../shared/domain/errors';
import { IP_PREFERENCES, PodSandboxMetadataSchema, PortMappingSchema } from '../../../shared/domain/config';
import type { CniConfigView, CniDns, CniResult, CniRoute, InterfaceConfig } from '../../../shared/domain/cni';
import type { EngineInfo } from '../../../shared/domain/sandbox';
import type { PodscopeVerboseSection } from '../verbose-info';

const str = z.string();
const num = z.number();
const stringMap = z.record(z.string(), z.string());
const unknownMap = z.record(z.string(), z.unknown());

export const SerializedErrorSchema: z.ZodType<SerializedError> = z.object({
  code: z.enum(ERROR_CODES),
  message: str,
  details: z.unknown().optional(),
  get cause() {
    return SerializedErrorSchema.optional();
  },
});

const IpPreference = z.enum(IP_PREFERENCES);
const IpSelectionSchema = z.object({ preference: IpPreference, primary: str, additional: z.array(str), reason: str });
const CniPortMappingSchema = z.object({ hostPort: num, containerPort: num, protocol: str, hostIP: str.optional() });
const CniRouteSchema: z.ZodType<CniRoute> = z.object({
  dst: str,
  gw: str.optional(),
  mtu: num.optional(),
  advmss: num.optional(),
  priority: num.optional(),
  table: num.optional(),
  scope: num.optional(),
});
const CniDnsSchema: z.ZodType<CniDns> = z.object({
  nameservers: z.array(str).optional(),
  domain: str.optional(),
  search: z.array(str).optional(),
  options: z.array(str).optional(),
});
const InterfaceConfigSchema: z.ZodType<InterfaceConfig> = z.object({
  mac: str.optional(),
  sandbox: str.optional(),
  ipConfigs: z.array(z.object({ ip: str, gateway: str.optional() })),
});
const CniResultSchema: z.ZodType<CniResult> = z.object({
  cniVersion: str,
  interfaces: z
    .array(
      z.object({
        name: str,
        mac: str.optional(),
        sandbox: str.optional(),
        mtu: num.optional(),
        socketPath: str.optional(),
        pciID: str.optional(),
      }),
    )
    .optional(),
  ips: z.array(z.object({ address: str, gateway: str.optional(), interface: num.optional() })).optional(),
  routes: z.array(CniRouteSchema).optional(),
  dns: CniDnsSchema.optional(),
});
const ParsedBandwidthValueSchema = z.object({
  annotation: str,
  raw: str,
  bitsPerSecond: str.optional(),
  human: str.optional(),
  error: str.optional(),
});
const PluginCallSchema = z.object({
  network: str,
  ifName: str,
  type: str,
  verb: z.enum(['ADD', 'DEL', 'CHECK', 'STATUS', 'VERSION', 'GC']),
  index: num,
  binary: str.optional(),
  env: stringMap,
  stdin: str,
  stdout: str,
  stderr: str,
  exitCode: num.nullable(),
  signal: str.nullable().optional(),
  timedOut: z.boolean().optional(),
});
export const TraceEntrySchema = z.object({
  seq: num,
  phase: z.enum(['run', 'stop', 'remove', 'cleanup', 'recover', 'watch', 'check', 'create', 'start']),
  step: str,
  label: str,
  startedAt: str,
  durationMs: num,
  ok: z.boolean(),
  error: SerializedErrorSchema.optional(),
  plugin: PluginCallSchema.optional(),
  detail: unknownMap.optional(),
});

export const PodscopeVerboseSectionSchema: z.ZodType<PodscopeVerboseSection> = z.object({
  format: z.literal('podscope.sandbox-status/v1'),
  // SandboxSummary
  id: str,
  name: str,
  metadata: PodSandboxMetadataSchema,
  state: z.enum(['SANDBOX_READY', 'SANDBOX_NOTREADY']),
  internalState: z.enum(['Unknown', 'Ready', 'NotReady']),
  createdAt: str,
  createdAtNs: str,
  labels: stringMap,
  annotations: stringMap,
  runtimeHandler: str,
  hostNetwork: z.boolean(),
  ip: str,
  additionalIps: z.array(str),
  hostPorts: z.array(CniPortMappingSchema),
  bandwidth: z.object({ ingress: str.optional(), egress: str.optional() }),
  cleanupPending: z
    .array(
      z.object({
        kind: z.enum(['cni', 'netns', 'pause', 'files', 'other']),
        network: str,
        ifName: str,
        plugin: str,
        index: num.optional(),
        holds: z.array(str),
        error: str,
        since: str,
      }),
    )
    .optional(),
  notReadyReason: str.optional(),
  // SandboxStatus
  ipPreference: IpPreference,
  netnsPath: str.optional(),
  netnsClosed: z.boolean(),
  pause: z.object({
    containerId: str,
    pid: num.optional(),
    startTicks: num.optional(),
    monitorPid: num.optional(),
    status: str,
    bundle: str.optional(),
  }),
  ipSelection: IpSelectionSchema.extend({ eth0Ips: z.array(str), alternatives: z.record(IpPreference, IpSelectionSchema) }).optional(),
  portMappings: z.array(
    z.object({ index: num, mapping: PortMappingSchema, passed: z.boolean(), reason: str.optional(), cni: CniPortMappingSchema.optional() }),
  ),
  bandwidthAnalysis: z.object({
    ingress: ParsedBandwidthValueSchema.optional(),
    egress: ParsedBandwidthValueSchema.optional(),
    capability: z.object({ ingressRate: num, ingressBurst: num, egressRate: num, egressBurst: num }).optional(),
    error: str.optional(),
  }),
  networks: z.array(
    z.object({
      network: str,
      ifName: str,
      source: str.optional(),
      cniVersion: str,
      result: CniResultSchema.optional(),
      capabilityArgs: unknownMap,
      cniArgs: z.array(z.tuple([str, str])),
      cacheFile: str.optional(),
    }),
  ),
  interfaces: z.record(z.string(), InterfaceConfigSchema),
  routes: z.array(CniRouteSchema),
  dns: z.array(CniDnsSchema),
  trace: z.array(TraceEntrySchema),
  lastError: SerializedErrorSchema.optional(),
  stoppedAt: str.optional(),
  seccomp: str.optional(),
  pauseExit: z
    .object({ at: str, exitCode: num.optional(), signal: str.optional(), note: str.optional(), finishedAt: str.optional() })
    .optional(),
});

export const CniConfigViewSchema: z.ZodType<CniConfigView> = z.object({
  confDir: str,
  binDirs: z.array(str),
  maxConfNum: num,
  networks: z.array(
    z.object({
      name: str,
      cniVersion: str,
      ifName: str,
      source: str.optional(),
      builtin: z.boolean(),
      disableCheck: z.boolean(),
      plugins: z.array(z.object({ type: str, capabilities: z.array(str), raw: unknownMap, binary: str.optional() })),
    }),
  ),
  errors: z.array(z.object({ source: str, message: str })),
  ready: z.boolean(),
  notReadyReason: str.optional(),
  skipped: z.array(z.object({ source: str, reason: str })).optional(),
  missingPlugins: z.array(z.object({ network: str, source: str.optional(), type: str, index: num })).optional(),
  loadedAt: str,
});

export const EngineInfoSchema: z.ZodType<EngineInfo> = z.object({
  version: str,
  pid: num,
  uid: num,
  stateDir: str,
  runDir: str,
  netnsDir: str,
  cniConfDir: str,
  cniBinDirs: z.array(str),
  cniCacheDir: str,
  ipPreference: IpPreference,
  maxConfNum: z.number().optional(),
  pluginTimeoutMs: z.number().optional(),
  problems: z.array(str),
  stateDirId: str.optional(),
  readOnly: z.boolean().optional(),
  startupGc: z
    .array(
      z.object({
        kind: z.enum(['cni-cache-temp', 'record-temp', 'state-id-temp', 'netns', 'runc-container', 'process', 'trace-rule']),
        path: str.optional(),
        id: str.optional(),
        action: str,
        error: str.optional(),
        at: str,
      }),
    )
    .optional(),
  hostLocalDirs: z.array(z.object({ network: str, plugin: str, dir: str, defaulted: z.boolean() })).optional(),
});

/**
 * The containerd-shaped part of PodSandboxStatus verbose info (verbose-info.ts), checked only as far as the client
 * reads it; everything else a runtime adds is ignored, `config` and `runtimeSpec` are validated where they are used.
 */
const GoCniResultSchema = z.looseObject({
  Interfaces: z
    .record(
      z.string(),
      z.looseObject({
        IPConfigs: z
          .array(z.looseObject({ IP: str, Gateway: str.nullable().optional() }))
          .nullable()
          .optional(),
        Mac: str.optional(),
        Sandbox: str.optional(),
      }),
    )
    .nullable()
    .optional(),
  DNS: z.array(CniDnsSchema).nullable().optional(),
  Routes: z.array(CniRouteSchema).nullable().optional(),
});
export const SandboxVerboseInfoSchema = z.looseObject({
  pid: num.optional(),
  processStatus: str.optional(),
  netNamespaceClosed: z.boolean().optional(),
  netNamespacePath: str.optional(),
  config: z.unknown().optional(),
  runtimeSpec: z.unknown().optional(),
  cniResult: GoCniResultSchema.nullable().optional(),
  podscope: z.unknown().optional(),
});

function issues(error: z.ZodError): string {
  const all = error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
  return all.length > 5 ? `${all.slice(0, 5).join('; ')}; … (${all.length - 5} more)` : all.join('; ');
}

/**
 * `raw` (JSON text, or an already parsed value) checked against `schema`; anything else is an Internal error that
 * names the endpoint and the document, never a crash.
 */
export function decodePeerJson<T>(schema: z.ZodType<T>, raw: unknown, endpoint: string, what: string): T {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new PodscopeError('Internal', `CRI endpoint ${endpoint} sent ${what} that is not JSON: ${(e as Error).message}`, {
        details: { endpoint },
      });
    }
  }
  const r = schema.safeParse(value);
  if (!r.success)
    throw new PodscopeError('Internal', `CRI endpoint ${endpoint} sent ${what} that is malformed: ${issues(r.error)}`, {
      details: { endpoint },
    });
  return r.data;
}
