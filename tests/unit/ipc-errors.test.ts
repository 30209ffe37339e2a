import { describe, expect, it } from 'vitest';
import { PodscopeError, deserializeError, serializeError } from '../../shared/domain/errors';
import { createClient } from '../../shared/ipc/client';

describe('errors across IPC', () => {
  it('survives JSON (the WebSocket) with code, details and cause', () => {
    const cause = new PodscopeError('CniError', 'plugin type="bridge" failed (add): no such device', { details: { code: 999 } });
    const e = new PodscopeError('RuntimeError', 'RunPodSandbox failed', { details: { step: 'cni.add' }, cause });
    const back = deserializeError(JSON.parse(JSON.stringify(serializeError(e))));
    expect(back).toBeInstanceOf(PodscopeError);
    expect(back).toMatchObject({ code: 'RuntimeError', message: 'RunPodSandbox failed', details: { step: 'cni.add' } });
    expect(back.cause).toMatchObject({ code: 'CniError', details: { code: 999 } });
  });

  it('turns a malformed reply into an Internal error rather than a crash', async () => {
    const client = createClient({ kind: 'memory', invoke: async () => 'garbage' as never, onEvent: () => () => {} });
    await expect(client.call('endpoints.list', {})).rejects.toMatchObject({ code: 'Internal' });
    const weird = createClient({
      kind: 'memory',
      invoke: async () => ({ ok: false, error: { code: 'Bogus', message: 1 } as never }),
      onEvent: () => () => {},
    });
    await expect(weird.call('endpoints.list', {})).rejects.toMatchObject({ code: 'Internal', message: 'unknown error' });
  });
});
