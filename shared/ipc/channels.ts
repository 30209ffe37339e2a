/**
 * The one IPC contract. Every front door of the desktop app (Electron IPC through the preload, the browser-mode
 * WebSocket) carries exactly these channels; main, preload, host and renderer are all typed from this map.
 * Each entry holds the zod schema of the request (checked by the router before anything runs) and, as a phantom
 * type, the response. Sandbox channels mirror SandboxApi one to one and name the endpoint they address.
 */
import { z } from 'zod';
import { IpPreferenceSchema, PodSandboxConfigSchema } from '../domain/config';
import { CniResultsDirSchema, LOCAL_ENDPOINT_ID, type EndpointView } from '../domain/endpoints';
import type { CniConfigView } from '../domain/cni';
import type { LiveNetworkView } from '../domain/live';
import type { NodeDiscovery, ProbeMatrix } from '../domain/nodes';
import type { ProbeReport } from '../domain/probe';
import type { CniCheckReport, CniStatusReport, ThroughputReport } from '../domain/measure';
import type { NetworkTopology, PodTopology } from '../domain/topology';
import {
  LabDiffRequestSchema,
  LabRunIdSchema,
  LabRunRequestSchema,
  LabSaveRequestSchema,
  LabTextSchema,
  type LabDiff,
  type LabRun,
  type LabRunSummary,
  type LabSaveResult,
  type LabValidation,
} from '../domain/lab';
import type { ConfigPreview, EngineInfo, RuntimeCondition, SandboxStatus, SandboxSummary } from '../domain/sandbox';
import { CONTAINER_STATES, ContainerConfigSchema, type ContainerStatusView, type ContainerSummary } from '../domain/container';
import { SessionIdSchema, TerminalSizeSchema, type ImageDetail, type ImageView, type PortForwardView } from '../domain/streams';

const endpointId = z.string().min(1).max(200).default(LOCAL_ENDPOINT_ID);
/** Sandbox ids are 64 hex chars from the engine, but CRI runtimes accept unique prefixes: keep it a bounded token. */
const sandboxId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'not a sandbox id');

export const RunSandboxRequestSchema = z.strictObject({
  config: PodSandboxConfigSchema,
  runtimeHandler: z.string().max(200).optional(),
  ipPreference: IpPreferenceSchema.optional(),
  requestId: z.string().max(200).optional(),
});

export const SandboxFilterSchema = z.strictObject({
  id: z.string().max(128).optional(),
  state: z.enum(['SANDBOX_READY', 'SANDBOX_NOTREADY']).optional(),
  labelSelector: z.record(z.string(), z.string()).optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
});

/** A channel definition: the request schema and, for typing only, the response. */
export interface ChannelDef<Req extends z.ZodType, Res> {
  request: Req;
  /** never read at run time; carries the response type */
  response?: Res;
}
const channel =
  <Res>() =>
  <Req extends z.ZodType>(request: Req): ChannelDef<Req, Res> => ({ request });

const onEndpoint = z.strictObject({ endpointId });
const onSandbox = z.strictObject({ endpointId, id: sandboxId });
/** container ids: 64 hex from the engine, unique prefixes accepted like sandbox ids */
const containerId = sandboxId;
const onContainer = z.strictObject({ endpointId, id: containerId });
/** an image reference, id or id prefix as crictl takes it */
const imageRef = z
  .string()
  .trim()
  .min(1, 'an image reference is required')
  .max(1024)
  .regex(/^[^\s]+$/, 'an image reference has no spaces');
const onSession = z.strictObject({ sessionId: SessionIdSchema });

export const CHANNELS = {
  'sandbox.run': channel<{ id: string }>()(z.strictObject({ endpointId, request: RunSandboxRequestSchema })),
  'sandbox.stop': channel<void>()(onSandbox),
  'sandbox.remove': channel<void>()(onSandbox),
  'sandbox.status': channel<SandboxStatus>()(onSandbox),
  'sandbox.list': channel<SandboxSummary[]>()(z.strictObject({ endpointId, filter: SandboxFilterSchema.optional() })),
  'sandbox.cniConfig': channel<CniConfigView>()(onEndpoint),
  'sandbox.preview': channel<ConfigPreview>()(z.strictObject({ endpointId, request: RunSandboxRequestSchema })),
  'sandbox.runtimeConditions': channel<RuntimeCondition[]>()(onEndpoint),
  'sandbox.info': channel<EngineInfo>()(onEndpoint),
  /** the kernel's view of the sandbox's network now (netns interfaces/routes, tc qdiscs, DNAT rules) */
  'sandbox.live': channel<LiveNetworkView>()(onSandbox),
  /** measure reachability now (TCP connects from the host and inside namespaces the engine created) */
  /** trace: follow each path's own connection through the kernel and explain it (docs/semantics.md#probe-trace) */
  'sandbox.probe': channel<ProbeReport>()(
    z.strictObject({ endpointId, id: sandboxId, trace: z.boolean().optional(), dnsName: z.string().max(253).optional() }),
  ),
  /** the last probe report (on demand or right after ready), null when never probed */
  'sandbox.lastProbe': channel<ProbeReport | null>()(onSandbox),
  /** bulk TCP each way through the pod's veth (bounded per direction), measured against the tbf the kernel has */
  'sandbox.throughput': channel<ThroughputReport>()(
    z.strictObject({ endpointId, id: sandboxId, durationMs: z.number().int().min(500).max(20_000).optional() }),
  ),
  /** the pod's wiring read from the kernel now */
  'sandbox.topology': channel<PodTopology>()(onSandbox),
  /** every ready pod on one CNI network, its bridge and the host, read from the kernel now */
  'network.topology': channel<NetworkTopology>()(z.strictObject({ endpointId, network: z.string().min(1).max(200) })),
  /** CNI CHECK of the pod's attachments with the cached result; recorded in the pod's trace */
  'sandbox.cniCheck': channel<CniCheckReport>()(onSandbox),
  /** CNI STATUS of every loaded network */
  'network.cniStatus': channel<CniStatusReport>()(onEndpoint),
  /** the containers of every pod, or of one (podSandboxId) */
  'containers.list': channel<ContainerSummary[]>()(
    z.strictObject({
      endpointId,
      filter: z
        .strictObject({
          podSandboxId: sandboxId.optional(),
          state: z.enum(CONTAINER_STATES as [string, ...string[]]).optional(),
        })
        .optional(),
    }),
  ),
  /** one container's CRI status (mounts, resources, the seccomp/AppArmor profile applied, the config it was made from) */
  'containers.status': channel<ContainerStatusView>()(onContainer),
  /** CreateContainer in a pod (its own config is used as sandbox config), then StartContainer unless start is false */
  'containers.create': channel<{ id: string; started: boolean }>()(
    z.strictObject({ endpointId, podSandboxId: sandboxId, config: ContainerConfigSchema, start: z.boolean().default(true) }),
  ),
  'containers.start': channel<void>()(onContainer),
  /** timeout in seconds before SIGKILL (CRI StopContainer) */
  'containers.stop': channel<void>()(
    z.strictObject({ endpointId, id: containerId, timeoutSeconds: z.number().int().min(0).max(3600).default(10) }),
  ),
  'containers.remove': channel<void>()(onContainer),
  /** the endpoint's images (the local store, or CRI ListImages) */
  'images.list': channel<ImageView[]>()(onEndpoint),
  /** layers and config; null when the endpoint does not have the image */
  'images.inspect': channel<ImageDetail | null>()(z.strictObject({ endpointId, ref: imageRef })),
  /** pulls; progress is pushed as `image.pull` events carrying requestId (the local store reports it, CRI does not) */
  'images.pull': channel<ImageView>()(z.strictObject({ endpointId, ref: imageRef, requestId: z.string().max(200).optional() })),
  /**
   * Loads an OCI image layout (a directory or its tar) or a `docker save` archive from a path on the engine's host
   * (the local store only: CRI has no call for it, so a CRI endpoint answers not-supported naming its own tool)
   */
  'images.load': channel<ImageView[]>()(
    z.strictObject({
      endpointId,
      path: z
        .string()
        .trim()
        .min(1, 'path: the archive or layout directory to load')
        .max(4096)
        .refine((p) => p.startsWith('/'), 'path: an absolute path on the engine’s host')
        .refine((p) => !p.includes('\0'), 'path: no NUL'),
    }),
  ),
  /** FailedPrecondition (the engine's own message) while a container uses it */
  'images.remove': channel<void>()(z.strictObject({ endpointId, ref: imageRef })),
  /**
   * A streaming exec in a container: returns the session id at once; output comes as `stream.data` events for that
   * id (acknowledge with stream.ack), then one `stream.exit`. The session is the caller's: it ends when its window
   * or socket goes away.
   */
  'stream.exec': channel<{ sessionId: string }>()(
    z.strictObject({
      endpointId,
      containerId,
      cmd: z.array(z.string().max(4096)).min(1, 'a command is required').max(256),
      tty: z.boolean().default(true),
      stdin: z.boolean().default(true),
      size: TerminalSizeSchema.optional(),
    }),
  ),
  /** attach to the container's own stdio (containers created with stdin/tty) */
  'stream.attach': channel<{ sessionId: string }>()(
    z.strictObject({
      endpointId,
      containerId,
      tty: z.boolean().default(true),
      stdin: z.boolean().default(true),
      size: TerminalSizeSchema.optional(),
    }),
  ),
  /** bytes for the session's stdin: text as is, or base64 */
  'stream.write': channel<void>()(
    z.strictObject({ sessionId: SessionIdSchema, data: z.string().max(1024 * 1024), encoding: z.enum(['utf8', 'base64']).default('utf8') }),
  ),
  /** ends the session's stdin (EOF) without ending the session */
  'stream.closeStdin': channel<void>()(onSession),
  /** the terminal's new size, handed to the process as a resize (SIGWINCH) */
  'stream.resize': channel<void>()(z.strictObject({ sessionId: SessionIdSchema, size: TerminalSizeSchema })),
  /** tells the host the renderer has consumed this many bytes (or log lines) of the session's output */
  'stream.ack': channel<void>()(z.strictObject({ sessionId: SessionIdSchema, bytes: z.number().int().min(0) })),
  /** ends an exec (kills the process), attach (detaches) or log follow; idempotent */
  'stream.close': channel<void>()(onSession),
  /**
   * A container's log (the CRI log file its status names): the last `tail` lines, then, with follow, every new one,
   * as `logs.lines` events for the returned session id; close with stream.close.
   */
  'logs.follow': channel<{ sessionId: string; logPath: string }>()(
    z.strictObject({
      endpointId,
      containerId,
      tail: z.number().int().min(0).max(100_000).default(1000),
      follow: z.boolean().default(true),
    }),
  ),
  /** listens on 127.0.0.1 (an ephemeral port unless hostPort is given) and forwards each connection to the pod's port */
  'portForward.open': channel<PortForwardView>()(
    z.strictObject({
      endpointId,
      podSandboxId: sandboxId,
      port: z.number().int().min(1).max(65535),
      hostPort: z.number().int().min(0).max(65535).default(0),
    }),
  ),
  'portForward.close': channel<void>()(z.strictObject({ id: SessionIdSchema })),
  /** the caller's own forwards */
  'portForward.list': channel<PortForwardView[]>()(z.strictObject({})),
  /** the CNI lab (local engine only; a CRI endpoint answers Unimplemented) */
  'lab.validate': channel<LabValidation>()(z.strictObject({ endpointId, text: LabTextSchema })),
  'lab.run': channel<LabRun>()(z.strictObject({ endpointId, request: LabRunRequestSchema })),
  'lab.list': channel<LabRunSummary[]>()(onEndpoint),
  'lab.get': channel<LabRun>()(z.strictObject({ endpointId, id: LabRunIdSchema })),
  'lab.diff': channel<LabDiff>()(LabDiffRequestSchema.extend({ endpointId })),
  'lab.save': channel<LabSaveResult>()(z.strictObject({ endpointId, request: LabSaveRequestSchema })),
  'endpoints.list': channel<EndpointView[]>()(z.strictObject({})),
  'endpoints.add': channel<EndpointView>()(
    z.strictObject({
      label: z.string().max(200).optional(),
      address: z.string().min(1, 'a socket path is required').max(4096),
      cniResultsDir: CniResultsDirSchema.optional(),
    }),
  ),
  'endpoints.remove': channel<void>()(z.strictObject({ id: z.string().min(1).max(200) })),
  'endpoints.rename': channel<EndpointView>()(
    z.strictObject({ id: z.string().min(1).max(200), label: z.string().trim().min(1, 'a label is required').max(200) }),
  ),
  /** the pod rows this window shows now: only those get their network facts read from a CRI endpoint */
  'endpoints.showing': channel<void>()(z.strictObject({ endpointId, ids: z.array(sandboxId).max(1000) })),
  /** every CRI runtime on this machine as a node (read-only: /proc and CRI Version) */
  'nodes.discover': channel<NodeDiscovery>()(z.strictObject({})),
  /** every pod × every pod of these added nodes, one probe run (each cell a real connect); traced: every cell followed */
  'nodes.matrix': channel<ProbeMatrix>()(
    z.strictObject({ endpointIds: z.array(z.string().min(1).max(200)).min(1).max(64), trace: z.boolean().default(false) }),
  ),
} as const;

export type ChannelMap = typeof CHANNELS;
export type ChannelName = keyof ChannelMap;
export const CHANNEL_NAMES = Object.keys(CHANNELS) as ChannelName[];

/** What a caller writes (defaults optional, enum names accepted). */
export type RequestOf<C extends ChannelName> = z.input<ChannelMap[C]['request']>;
/** What a handler receives after validation. */
export type ParsedRequestOf<C extends ChannelName> = z.output<ChannelMap[C]['request']>;
export type ResponseOf<C extends ChannelName> = Exclude<ChannelMap[C]['response'], undefined>;

export function isChannelName(x: unknown): x is ChannelName {
  return typeof x === 'string' && Object.prototype.hasOwnProperty.call(CHANNELS, x);
}
