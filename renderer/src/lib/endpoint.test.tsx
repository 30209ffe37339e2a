// @vitest-environment jsdom
/** An endpoint removed while selected (here, in another window, by the CLI) takes its screens' errors with it. */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, screen, waitFor } from '@testing-library/react';
import { QueryClient } from '@tanstack/react-query';
import { renderWithEngine } from '../test/render-with-engine';
import { applyEvent } from '../app/engine-events';
import { useEndpointId, useEndpointSelection, useEndpointsPolled } from './endpoint';
import { queryKeys } from './query-keys';
import { LOCAL_ENDPOINT_ID } from '../../../shared/domain/endpoints';

afterEach(() => {
  cleanup();
  useEndpointSelection.setState({ endpointId: LOCAL_ENDPOINT_ID });
});

function Selected() {
  useEndpointsPolled();
  return <span data-testid="selected">{useEndpointId()}</span>;
}

describe('a removed endpoint', () => {
  it('is no longer selected once the list lacks it: the screens go back to the local engine', async () => {
    useEndpointSelection.setState({ endpointId: 'cri-removed' });
    await renderWithEngine(<Selected />);
    await waitFor(() => expect(screen.getByTestId('selected').textContent).toBe(LOCAL_ENDPOINT_ID));
  });

  it('drops everything cached for it (its last error or list) when the endpoints list says it is gone', () => {
    const qc = new QueryClient();
    const view = (id: string) => ({ id, label: id, kind: 'cri' as const }) as never;
    qc.setQueryData(queryKeys.endpoints, [view('local'), view('cri-1')]);
    qc.setQueryData(queryKeys.pods('cri-1'), []);
    qc.setQueryData(queryKeys.pods('local'), []);
    applyEvent(qc, { kind: 'endpoints.changed', endpoints: [view('local')] });
    expect(qc.getQueryData(queryKeys.pods('cri-1'))).toBeUndefined();
    expect(qc.getQueryData(queryKeys.pods('local'))).toEqual([]);
  });
});
