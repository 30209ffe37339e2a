/**
 * The CRI list follower's diff (electron/endpoints/pod-follower.ts): a re-list pushes only the rows that changed,
 * unchanged rows keep their object, and network facts (which ListPodSandbox lacks) are kept for changed rows and
 * re-read only for new rows and rows whose state changed. The renderer's merge keeps unchanged rows' identity too.
 */
import { describe, expect, it } from 'vitest';
import { diffContainers, diffSandboxes } from '../../electron/endpoints/list-diff';
import { mergeDelta } from '../../renderer/src/app/engine-events';
import { pod } from '../../renderer/src/test/pod-summary';
import type { SandboxSummary } from '../../shared/domain/sandbox';
import type { ContainerSummary } from '../../shared/domain/container';

/** a row as ListPodSandbox gives it: no network facts */
const listed = (p: SandboxSummary): SandboxSummary => ({ ...p, ip: '', additionalIps: [], hostNetwork: false });

describe('list follower diff', () => {
  const web = pod('web', 'prod', { ip: '10.0.0.2', additionalIps: ['fd00::2'] });
  const db = pod('db', 'prod', { ip: '10.0.0.3' });
  const prev = new Map([
    [web.id, web],
    [db.id, db],
  ]);

  it('an unchanged re-list pushes nothing, keeps every row object and its network facts, and asks for no status', () => {
    const { next, delta, needNet } = diffSandboxes(prev, [listed(web), listed(db)]);
    expect(delta).toEqual({ upserts: [], removed: [] });
    expect(needNet).toEqual([]);
    expect(next.get(web.id)).toBe(web);
    expect(next.get(db.id)!.ip).toBe('10.0.0.3');
  });

  it('pushes a changed row with the network facts it had, a new row, and a removed id; status only for new or state-changed rows', () => {
    const relabelled = listed({ ...web, labels: { app: 'web2' } });
    const stopped = listed({ ...db, state: 'SANDBOX_NOTREADY' });
    const added = listed(pod('cache', 'prod'));
    const r1 = diffSandboxes(prev, [relabelled, added]);
    expect(r1.delta.upserts.map((p) => p.id)).toEqual([web.id, added.id]);
    expect(r1.delta.upserts[0]).toMatchObject({ labels: { app: 'web2' }, ip: '10.0.0.2', additionalIps: ['fd00::2'] });
    expect(r1.delta.removed).toEqual([db.id]);
    // a label change keeps the IP the pod had; only the new pod needs its status
    expect(r1.needNet).toEqual([added.id]);

    const r2 = diffSandboxes(prev, [listed(web), stopped]);
    expect(r2.delta.upserts).toEqual([{ ...stopped, ip: '10.0.0.3', additionalIps: [], hostNetwork: false }]);
    // a stop tears the network down: its facts are read again
    expect(r2.needNet).toEqual([db.id]);
  });

  it('containers: only changed, new and removed ones; an exit code is read once, when a container exits', () => {
    const c = (id: string, state: ContainerSummary['state']): ContainerSummary => ({
      id,
      podSandboxId: 'web-id',
      name: id,
      metadata: { name: id, attempt: 0 },
      image: 'busybox',
      imageRef: 'sha256:1',
      state,
      createdAt: '2026-01-01T00:00:00Z',
      createdAtNs: '1',
      labels: {},
      annotations: {},
      reason: '',
      exitCode: 0,
    });
    const a = c('a', 'CONTAINER_RUNNING');
    const b = c('b', 'CONTAINER_RUNNING');
    const { next, delta, needExit } = diffContainers(
      new Map([
        [a.id, a],
        [b.id, b],
      ]),
      [{ ...a }, c('b', 'CONTAINER_EXITED'), c('n', 'CONTAINER_CREATED')],
    );
    // the list has no exit code: only the container that just exited is asked for it
    expect(needExit).toEqual(['b']);
    expect(delta.upserts.map((x) => [x.id, x.state])).toEqual([
      ['b', 'CONTAINER_EXITED'],
      ['n', 'CONTAINER_CREATED'],
    ]);
    expect(delta.removed).toEqual([]);
    expect(next.get('a')).toBe(a);
    expect(diffContainers(next, [a]).delta.removed).toEqual(['b', 'n']);
  });
});

describe('renderer merge of a pushed delta', () => {
  it('replaces changed rows in place, drops removed ones, puts new ones first, and keeps unchanged row objects', () => {
    const a = pod('a', 'n');
    const b = pod('b', 'n');
    const c = pod('c', 'n');
    const b2 = { ...b, ip: '10.0.0.9' };
    const d = pod('d', 'n');
    const out = mergeDelta([a, b, c], { upserts: [b2, d], removed: [c.id] })!;
    expect(out.map((p) => p.id)).toEqual(['d-id', 'a-id', 'b-id']);
    expect(out[1]).toBe(a);
    expect(out[2]).toBe(b2);
    // nothing cached yet: nothing to patch (the first fetch brings the whole list)
    expect(mergeDelta(undefined, { upserts: [d], removed: [] })).toBeUndefined();
  });
});
