/**
 * The runtime-level reads over CRI: Status (conditions, and the CNI configuration and engine info a peer's verbose
 * info carries), Version as a ping, and probes of what the runtime serves (events, streaming), never assumed.
 */
import type { CniConfigView } from '../../../shared/domain/cni';
import { PodscopeError, isNotSupported } from '../../../shared/domain/errors';
import type { EngineInfo, RuntimeCondition } from '../../../shared/domain/sandbox';
import { CNI_LOAD_OK, STATUS_INFO_CNI_KEY, STATUS_INFO_CNI_LOAD_KEY, STATUS_INFO_CONFIG_KEY } from '../server/runtime-status';
import type { CriConnection } from './connection';
import { decodeGoCniConfig } from './decode-cni-config';
import type { CriEndpointApi } from './endpoint-api-types';
import { describeRuntime, isPodscopeConn, unimplemented, type EndpointLink } from './endpoint-link';
import { CniConfigViewSchema, decodePeerJson, EngineInfoSchema } from './peer-schemas';

type RuntimeReads = Pick<CriEndpointApi, 'cniConfig' | 'runtimeConditions' | 'info' | 'ping' | 'supportsEvents' | 'supportsStreaming'>;

const statusInfo = async (conn: CriConnection): Promise<Record<string, string>> =>
  (await conn.call((c) => c.status, { verbose: true })).info;

async function cniConfigOf(conn: CriConnection): Promise<CniConfigView> {
  const info = await statusInfo(conn);
  const raw = info[STATUS_INFO_CNI_KEY];
  const loadStatus = info[STATUS_INFO_CNI_LOAD_KEY];
  if (!raw && loadStatus !== undefined && loadStatus !== CNI_LOAD_OK) {
    throw new PodscopeError(
      'FailedPrecondition',
      `${describeRuntime(conn)} at ${conn.socketPath} could not load its CNI configuration: ${loadStatus.slice(0, 4096)}`,
    );
  }
  if (!raw) throw unimplemented('cniConfig', 'the CNI configuration', describeRuntime(conn));
  if (isPodscopeConn(conn)) return decodePeerJson(CniConfigViewSchema, raw, conn.socketPath, 'a Podscope CNI configuration');
  try {
    return decodeGoCniConfig(raw);
  } catch (e) {
    throw new PodscopeError(
      'Internal',
      `CRI endpoint ${conn.socketPath} sent a CNI configuration that cannot be read: ${(e as Error).message}`,
      {
        details: { endpoint: conn.socketPath },
      },
    );
  }
}

/** An unserved GetContainerEvents fails at once; a served one just stays open, so a quiet stream after a short wait is "yes". */
function eventsServed(conn: CriConnection): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const stream = conn.events();
    const timer = setTimeout(() => {
      stream.cancel();
      resolve(true);
    }, 500);
    stream.on('error', (e: { code?: number }) => {
      clearTimeout(timer);
      resolve(e.code === 1 /* CANCELLED by us */);
    });
    stream.on('data', () => undefined);
  });
}

export function runtimeReads(link: EndpointLink): RuntimeReads {
  const { connected } = link;
  return {
    async cniConfig() {
      return cniConfigOf(await connected());
    },
    async runtimeConditions(): Promise<RuntimeCondition[]> {
      const res = await (await connected()).call((c) => c.status, { verbose: false });
      return (res.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message }));
    },
    async info(): Promise<EngineInfo> {
      const conn = await connected();
      const raw = isPodscopeConn(conn) ? (await statusInfo(conn))[STATUS_INFO_CONFIG_KEY] : undefined;
      if (!raw) throw unimplemented('engineInfo', 'engine info', describeRuntime(conn));
      return decodePeerJson(EngineInfoSchema, raw, conn.socketPath, 'Podscope engine info');
    },
    async ping(timeoutMs = 2000) {
      return (await connected()).call((c) => c.version, { version: '0.1.0' }, timeoutMs);
    },
    async supportsEvents() {
      return eventsServed(await connected());
    },
    async supportsStreaming() {
      const conn = await connected();
      // nothing runs: no container has the empty id, so a runtime that serves Exec refuses it (NotFound or
      // InvalidArgument) before any URL is made
      return conn
        .call((c) => c.exec, { containerId: '', cmd: ['true'], tty: false, stdin: false, stdout: true, stderr: false })
        .then(
          () => true,
          (e: unknown) => !isNotSupported(e),
        );
    },
  };
}
