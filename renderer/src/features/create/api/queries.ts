/** Preview (what each plugin would receive) and run, for the create form. */
import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import type { IpPreference, PodSandboxConfigInput } from '../../../../../shared/domain/config';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { queryKeys } from '../../../lib/query-keys';

export const previewQuery = (
  client: PodscopeClient,
  endpointId: string,
  config: PodSandboxConfigInput,
  ipPreference: IpPreference | undefined,
  enabled: boolean,
) =>
  queryOptions({
    queryKey: queryKeys.preview(endpointId, config, ipPreference),
    queryFn: () => client.call('sandbox.preview', { endpointId, request: { config, ...(ipPreference ? { ipPreference } : {}) } }),
    enabled,
    placeholderData: keepPreviousData,
    staleTime: Infinity,
    retry: false,
  });

export interface RunVariables {
  config: PodSandboxConfigInput;
  ipPreference?: IpPreference;
  /** CRI runtime_handler ('' or absent: the engine's default) */
  runtimeHandler?: string;
  requestId: string;
}

export function useRunSandbox(client: PodscopeClient, endpointId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ config, ipPreference, runtimeHandler, requestId }: RunVariables) =>
      client.call('sandbox.run', {
        endpointId,
        request: { config, requestId, ...(ipPreference ? { ipPreference } : {}), ...(runtimeHandler ? { runtimeHandler } : {}) },
      }),
    onSettled: () => qc.invalidateQueries({ queryKey: queryKeys.pods(endpointId) }),
  });
}
