/**
 * A containerd pod measured in the app like one of Podscope's own: a real containerd (Debian 1.6.20, the e2e env's
 * bridge, portmap and bandwidth) runs a pod made as kubelet would make it — a host port, 10M each way, a busybox
 * httpd container on port 80 — and the UI, with that containerd added as an endpoint, fills Reachability (the host
 * port reachable with its time, the gateway), Why?/Trace (the steps, portmap's DNAT owned by containerd's pod), the
 * topology (eth0, its host veth, the bridge), Throughput (a measured rate against the tbf) and CNI CHECK from
 * measurements this process makes in the pod's netns. Nothing of containerd's is changed: the pod stays Ready and its
 * container Running.
 */
import { test, expect } from '../support/fixtures';
import { CTD_BRIDGE } from '../support/containerd-env';
import { e2ePort } from '../support/sandbox-env';
import { importBusybox, runHttpdPod } from '../../testkit/containerd-pod';

const HOST_PORT = e2ePort(10);

test("a containerd pod's Reachability, Why?, Topology, Throughput and CHECK, measured here", async ({ app, containerd }) => {
  test.setTimeout(180_000);
  const { page } = app;
  importBusybox(containerd.fixture);
  const pod = await runHttpdPod(containerd.fixture, { name: 'ctd-httpd', hostPort: HOST_PORT });
  const truth = await containerd.fixture.api.status(pod.podId);

  await app.endpoints.add(containerd.socketPath, 'containerd (measured)');
  await expect(app.endpoints.capabilityNote).not.toContainText('live kernel view');
  await app.pods.open('ctd-httpd');

  await test.step('Reachability: the host port and the gateway reachable, each with its time', async () => {
    await app.detail.tab('Reachability');
    await page.getByTestId('probe-button').click();
    const reach = page.getByTestId('reachability');
    await expect(reach.getByTestId('reach-measured-at')).toBeVisible({ timeout: 30_000 });
    const hostPort = reach.locator('tbody tr[data-kind="hostPort"][data-verdict="reachable"]').filter({ hasText: `:${HOST_PORT}/tcp` });
    await expect(hostPort.first()).toBeVisible();
    // the connect's round-trip time, measured (never a dash on a reachable path)
    await expect(hostPort.first().locator('td').nth(4)).toHaveText(/^\d+\.\d\d ms$/);
    // the pod port answered by containerd's httpd (an existing listener, not the probe's responder)
    await expect(reach.locator('tbody tr[data-kind="gateway"][data-verdict="reachable"]').first()).toBeVisible();
    await expect(reach.getByTestId('reach-errors')).toHaveCount(0);
    await reach.scrollIntoViewIfNeeded();
    await app.screenshot('ctdm-01-reachability');
  });

  await test.step("Why?/Trace: a host-port path's steps through the kernel, portmap's DNAT owned by containerd's pod", async () => {
    const reach = page.getByTestId('reachability');
    const row = reach.locator('tbody tr[data-kind="hostPort"][data-verdict="reachable"]').first();
    await expect(row.getByTestId('reach-why')).toHaveText('Trace');
    await row.getByTestId('reach-why').click();
    const trace = reach.getByTestId('path-trace');
    await expect(trace.getByTestId('trace-why')).toBeVisible({ timeout: 60_000 });
    await expect(trace.getByTestId('trace-why')).toContainText('answered');
    await expect(trace.getByTestId('trace-owner').filter({ hasText: 'portmap · ' }).first()).toContainText('ctd-httpd');
    // containerd records no plugin calls: the owner is named, with no link to a CNI trace that cannot exist
    await expect(trace.getByTestId('trace-owner-cni')).toHaveCount(0);
    await trace.scrollIntoViewIfNeeded();
    await app.screenshot('ctdm-02-why');
  });

  await test.step('Topology: eth0, its host veth and the bridge, read from the kernel', async () => {
    await app.detail.tab('Network');
    await expect(page.getByTestId('topo-measured-at')).toContainText('read from the kernel at', { timeout: 20_000 });
    await expect(page.getByTestId('topo-node-pod-if-eth0')).toBeVisible();
    await expect(page.getByTestId(`topo-node-bridge-${CTD_BRIDGE}`)).toBeVisible();
    await expect(page.getByTestId('topo-edge-veth')).toHaveCount(1);
    await page.getByTestId('topology').scrollIntoViewIfNeeded();
    await app.screenshot('ctdm-03-topology');
  });

  await test.step("Throughput: each way through the veth against the tbf containerd's bandwidth plugin made", async () => {
    await app.detail.tab('Bandwidth');
    await page.getByTestId('tp-run').click();
    await expect(page.getByTestId('tp-ingress')).toHaveAttribute('data-verdict', 'shaped', { timeout: 60_000 });
    await expect(page.getByTestId('tp-egress')).toHaveAttribute('data-verdict', 'shaped');
    await expect(page.getByTestId('tp-requested-ingress')).toHaveText('10 Mbit/s');
    await expect(page.getByTestId('tp-measured-ingress')).toHaveText(/^(8\.\d+|9(\.\d+)?|1[01](\.\d+)?) Mbit\/s$/);
    await expect(page.getByTestId('tp-measured-at')).toContainText('measured at');
    await page.getByTestId('throughput').scrollIntoViewIfNeeded();
    await app.screenshot('ctdm-04-throughput');
  });

  await test.step('CNI CHECK: run with the cached result, beside the trace containerd does not record', async () => {
    await app.detail.tab('CNI trace');
    await page.getByTestId('cni-check-run').click();
    const result = page.getByTestId('cni-check-result');
    await expect(result).toBeVisible({ timeout: 30_000 });
    await expect(result.locator('tr').filter({ hasText: CTD_BRIDGE })).toHaveCount(1);
    await expect(page.getByText('CNI plugin trace: not available from this runtime')).toBeVisible();
    await page.getByTestId('cni-check').scrollIntoViewIfNeeded();
    await app.screenshot('ctdm-05-cni-check');
  });

  // read-only: containerd's pod and container are as they were
  expect((await containerd.fixture.api.status(pod.podId)).state).toBe('SANDBOX_READY');
  expect((await containerd.fixture.api.containerStatus(pod.containerId)).state).toBe('CONTAINER_RUNNING');
  expect(truth.state).toBe('SANDBOX_READY');
});
