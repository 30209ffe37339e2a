import { QueryClient } from '@tanstack/react-query';
import { PodscopeError } from '../../../shared/domain/errors';

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Engine data changes through events, not time: refetching on focus would only add noise.
        staleTime: 30_000,
        refetchOnWindowFocus: false,
        // Retrying NotFound or InvalidArgument cannot help.
        retry: (count, e) =>
          count < 2 &&
          !(e instanceof PodscopeError && ['NotFound', 'InvalidArgument', 'Unimplemented', 'FailedPrecondition'].includes(e.code)),
      },
    },
  });
}
