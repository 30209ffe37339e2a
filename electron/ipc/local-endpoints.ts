/**
 * The endpoint registry used when the host is given none: only the in-process engine. Adding a CRI endpoint is
 * reported as Unimplemented (the CRI client lives elsewhere and is wired in by whoever builds the host).
 */
import { LOCAL_ENDPOINT_CAPABILITIES, LOCAL_ENDPOINT_ID, LOCAL_ENDPOINT_LABEL, type EndpointRegistry, type EndpointView } from '../../shared/domain/endpoints';
import { PodscopeError, notFound } from '../../shared/domain/errors';
import type { SandboxApi } from '../../shared/domain/sandbox';

export function localEndpointView(): EndpointView {
  return {
    id: LOCAL_ENDPOINT_ID,
    kind: 'podscope-engine',
    label: LOCAL_ENDPOINT_LABEL,
    connected: true,
    capabilities: { ...LOCAL_ENDPOINT_CAPABILITIES },
  };
}

export function createLocalOnlyRegistry(engine: SandboxApi): EndpointRegistry {
  return {
    async list() {
      return [localEndpointView()];
    },
    async add() {
      throw new PodscopeError('Unimplemented', 'CRI endpoints are not available in this build: only the local engine can be used');
    },
    async remove(id) {
      if (id === LOCAL_ENDPOINT_ID) throw new PodscopeError('FailedPrecondition', 'the local engine cannot be removed');
      throw notFound(`no endpoint ${JSON.stringify(id)}`);
    },
    api(id) {
      if (id !== LOCAL_ENDPOINT_ID) throw notFound(`no endpoint ${JSON.stringify(id)}`);
      return engine;
    },
  };
}
