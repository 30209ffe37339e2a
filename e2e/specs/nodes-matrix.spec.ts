/**
 * Two kind-shaped nodes in the app (testkit/kind-cluster.ts: each a containerd in a netns of its own with its own
 * hostname, the second also in its own mount and pid namespaces; a host bridge and kindnet-style routes between their
 * pod subnets), added from the Nodes dialog's discovered list:
 * - a pod of the hidden node probed from the app: its host port answers at the node's own loopback, which only the
 *   node's netns has (the app's measurer is placed in the node as the CLI's is);
 * - both nodes listed, each name whole in the Node column;
 * - the matrix, pods × pods across both nodes from one probe run: every cell reachable with its measured time;
 * - a kindnet route removed on one node: the cells across fail, and a failed cell names that node and the route;
 * - a DROP in the other node's FORWARD chain, measured with a trace: the failed cell's path shows the DROP on that node.
 * One cluster for the file (built in beforeAll: it is the expensive part); every route and rule changed is put back.
 */
import { execFileSync } from 'node:child_process';
import { test, expect } from '../support/fixtures';
import { startKindCluster, type KindCluster } from '../../testkit/kind-cluster';
import { LOCAL_ENDPOINT_LABEL } from '../../shared/domain/endpoints';

let cluster: KindCluster | undefined;
const pods: Array<{ name: string; node: number; id: string; ip: string; hostPort?: number }> = [];

test.beforeAll(async () => {
  test.setTimeout(240_000);
  cluster = await startKindCluster([{}, { privateMount: true, ownPid: true }]);
  // two pods on the first node (a pair within a node beside the pairs across), one with a host port on the hidden one
  const wanted = [
    { name: 'mx-a1', node: 0 },
    { name: 'mx-a2', node: 0 },
    { name: 'mx-b1', node: 1, hostPort: cluster.lease.port(0) },
  ];
  for (const w of wanted) {
    const n = cluster.nodes[w.node]!;
    const config = {
      metadata: { name: w.name, namespace: 'mx', uid: w.name, attempt: 0 },
      hostname: w.name,
      ...(w.hostPort && { port_mappings: [{ protocol: 0, container_port: 8080, host_port: w.hostPort }] }),
    };
    const { id } = await n.containerd.api.run({ config });
    const status = await n.containerd.api.status(id);
    // the address other nodes' pods reach it at: kindnet routes IPv4
    const ip = [status.ip, ...status.additionalIps].find((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a)) ?? '';
    pods.push({ ...w, id, ip });
  }
});

test.afterAll(async () => {
  await cluster?.stop();
});

const inNode = (i: number, cmd: string[]) => execFileSync('nsenter', [`--net=${cluster!.nodes[i]!.netnsPath}`, ...cmd], { stdio: 'pipe' });

test('the matrix of two kind-shaped nodes: all reachable with their times; a missing route and a DROP named on their node', async ({
  app,
  env,
}) => {
  test.setTimeout(240_000);
  const { page } = app;
  const [n0, n1] = [cluster!.nodes[0]!, cluster!.nodes[1]!];

  // a pod of this machine too: its node's long name is listed beside the kind nodes' (and left out of the matrix)
  await env.engine.run({ config: { metadata: { name: 'mx-local', namespace: 'mx', uid: 'u-mx-local' } } });
  await app.goto('Sandboxes');
  await test.step('both nodes added from the discovered list (the hidden one through its root)', async () => {
    for (const n of [n0, n1]) {
      await app.endpoints.openAddDialog();
      const row = app.endpoints.discoveredNodes.filter({ hasText: n.hostname });
      await expect(row).toHaveCount(1, { timeout: 30_000 });
      await row.getByRole('button', { name: 'Add' }).click();
      await expect(app.endpoints.dialog).toBeHidden({ timeout: 30_000 });
    }
    await expect.poll(() => app.endpoints.selectedLabel()).toBe(n1.hostname);
  });

  await test.step("a pod of the hidden node probed from the app: its host port answers at the node's loopback", async () => {
    await app.pods.open('mx-b1');
    await app.detail.tab('Reachability');
    await page.getByTestId('probe-button').click();
    const reach = page.getByTestId('reachability');
    await expect(reach.getByTestId('reach-measured-at')).toBeVisible({ timeout: 30_000 });
    const port = pods.find((p) => p.name === 'mx-b1')!.hostPort!;
    await expect(
      reach.locator('tbody tr[data-kind="hostPort"][data-verdict="reachable"]').filter({ hasText: `127.0.0.1:${port}` }),
    ).toHaveCount(1);
    await expect(reach.locator('tbody tr[data-kind="gateway"][data-verdict="reachable"]').first()).toBeVisible();
  });

  await test.step('both nodes listed, each name whole in the Node column', async () => {
    const filter = page.getByTestId('node-filter');
    await filter.locator('summary').click();
    await filter.getByRole('checkbox', { name: n0.hostname }).check();
    await filter.getByRole('checkbox', { name: LOCAL_ENDPOINT_LABEL }).check();
    await filter.locator('summary').click();
    await expect(app.pods.row('mx-local').locator('[data-col="node"]')).toHaveText(LOCAL_ENDPOINT_LABEL);
    for (const p of pods) await expect(app.pods.row(p.name).locator('[data-col="node"]')).toHaveText(cluster!.nodes[p.node]!.hostname);
    // a name cut by an ellipsis is wider than its cell
    const cut = await page
      .locator('[data-col="node"]')
      .evaluateAll((cells) => cells.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent));
    expect(cut).toEqual([]);
  });

  const matrix = page.getByTestId('node-matrix');
  const cell = (from: string, to: string) =>
    matrix.locator(`[data-testid="matrix-row"][data-pod="mx/${from}"]`).getByRole('button', { name: new RegExp(`^to mx/${to}: `) });
  // one more run answered (the panel counts them): never the previous run's grid
  const measure = async () => {
    const runs = Number(await matrix.getAttribute('data-runs'));
    await matrix.getByRole('button', { name: /^(Measure|Measure again)$/ }).click();
    await expect(matrix).toHaveAttribute('data-runs', String(runs + 1), { timeout: 60_000 });
    await expect(matrix.getByTestId('matrix-summary')).toBeVisible();
  };

  await test.step('the matrix: every pod × every pod across both nodes reachable, each with its measured time', async () => {
    await page.getByRole('button', { name: 'Matrix' }).click();
    await expect(matrix).toBeVisible();
    await expect(matrix.getByTestId('matrix-left-out')).toContainText(LOCAL_ENDPOINT_LABEL);
    await measure();
    await expect(matrix.getByTestId('matrix-summary')).toContainText('all 6 reachable');
    await expect(matrix.locator('td[data-verdict="reachable"]')).toHaveCount(6);
    for (const [a, b] of [
      ['mx-a1', 'mx-b1'],
      ['mx-b1', 'mx-a2'],
      ['mx-a1', 'mx-a2'],
    ])
      await expect(cell(a!, b!)).toHaveText(/^✓ \d+(\.\d+)? ms$/);
    await expect(matrix.getByRole('columnheader', { name: n0.hostname })).toBeVisible();
    await expect(matrix.getByRole('rowheader', { name: n1.hostname })).toBeVisible();
    await app.screenshot('nodes-matrix-01-all-reachable');
  });

  await test.step('a kindnet route removed on one node: the paths across fail, naming that node and the route', async () => {
    inNode(0, ['ip', 'route', 'del', n1.podSubnet4]);
    try {
      await measure();
      await expect(matrix.getByTestId('matrix-summary')).toContainText('4 of 6 failed');
      // within the node still reachable
      await expect(cell('mx-a1', 'mx-a2')).toHaveText(/^✓/);
      await cell('mx-a1', 'mx-b1').click();
      const why = matrix.getByTestId('matrix-why');
      await expect(why).toContainText(n0.hostname);
      await expect(why).toContainText(n1.podSubnet4);
      await app.screenshot('nodes-matrix-02-missing-route');
    } finally {
      inNode(0, ['ip', 'route', 'add', n1.podSubnet4, 'via', n1.address]);
    }
  });

  await test.step("a DROP in the other node's FORWARD chain, traced: the failed path shows the DROP on that node", async () => {
    const dst = pods.find((p) => p.name === 'mx-b1')!;
    // new connections to the pod only: the replies to its own connects still pass, so only the paths to it fail
    const rule = ['FORWARD', '-d', `${dst.ip}/32`, '-p', 'tcp', '-m', 'conntrack', '--ctstate', 'NEW', '-j', 'DROP'];
    inNode(1, ['iptables', '-I', ...rule]);
    try {
      await matrix.getByRole('checkbox', { name: /trace every path/ }).check();
      await measure();
      await expect(matrix.getByTestId('matrix-summary')).toContainText('2 of 6 failed');
      await cell('mx-a2', 'mx-b1').click();
      const path = matrix.getByTestId('matrix-path');
      const decisive = path.locator('[data-decisive="true"]');
      await expect(decisive).toContainText('FORWARD');
      await expect(decisive).toContainText(n1.hostname);
      await expect(decisive.getByTestId('trace-owner')).toHaveText('no plugin here');
      await path.scrollIntoViewIfNeeded();
      await app.screenshot('nodes-matrix-03-drop-traced');
    } finally {
      inNode(1, ['iptables', '-D', ...rule]);
    }
  });
});
