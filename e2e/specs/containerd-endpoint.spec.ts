/**
 * A foreign CRI runtime in the UI: a real containerd (Debian 1.6.20, its own socket, conflist and bridge psc-ctde on
 * 10.240.0.0/24 + fd00:240::/64; PODSCOPE_E2E_CTD_BRIDGE/_SUBNET change them) runs a sandbox created through
 * Podscope's CRI client; the UI adds the socket as an endpoint, lists that pod and shows what containerd exposes (IPs, eth0 from its cniResult, interfaces, port
 * decisions) and marks what it cannot give (the per-plugin trace). Adding something that is not a CRI socket fails
 * inline in the dialog.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect } from '../support/fixtures';
import { CTD_BRIDGE, CTD_SUBNET } from '../support/containerd-env';
import { E2E_TMP_PREFIX, e2ePort } from '../support/sandbox-env';

const HOST_PORT = e2ePort(7);

const CTD_V4 = new RegExp(`^10\\.${CTD_SUBNET}\\.0\\.\\d+$`);
const CTD_V6_IN = new RegExp(`fd00:${CTD_SUBNET}::[0-9a-f]+`);

test('adding an endpoint that is not a CRI socket shows a clear inline error', async ({ app, env }) => {
  const dir = mkdtempSync(join(tmpdir(), `${E2E_TMP_PREFIX}notcri-`));
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const missing = join(dir, 'missing.sock');
    const plainFile = join(dir, 'plain-file.sock');
    writeFileSync(plainFile, 'not a socket\n');
    // a socket file nobody listens on (bound, never listening), as a crashed runtime leaves behind
    const stale = join(dir, 'stale.sock');
    execFileSync('python3', ['-c', 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', stale]);
    // a live socket that is not gRPC: plain HTTP/1
    const httpSock = join(dir, 'http.sock');
    const http = createServer((_q, res) => res.end('hello\n'));
    await new Promise<void>((res) => http.listen(httpSock, res));
    cleanups.push(() => new Promise<void>((res) => http.close(() => res())));

    await app.endpoints.openAddDialog();
    await test.step('a path that does not exist', async () => {
      await app.endpoints.fillAddress(missing);
      await app.endpoints.connectButton.click();
      await expect(app.endpoints.error).toBeVisible();
      await expect(app.endpoints.error).toContainText('Could not add the node');
      await expect(app.endpoints.error).toContainText('Unavailable');
      await expect(app.endpoints.error).toContainText(missing);
      await expect(app.endpoints.error).toContainText('not found or not a unix socket');
      // the dialog stays open with the address kept, so it can be corrected
      await expect(app.endpoints.dialog).toBeVisible();
      await expect(app.endpoints.socketPath).toHaveValue(missing);
      await app.screenshot('22-endpoint-add-missing');
    });

    await test.step('a plain file', async () => {
      await app.endpoints.fillAddress(plainFile);
      await app.endpoints.connectButton.click();
      await expect(app.endpoints.error).toContainText(plainFile);
      // the same answer as for a missing path: nothing about what is there (electron/cri/client/socket-check.ts)
      await expect(app.endpoints.error).toContainText('not found or not a unix socket');
      await app.screenshot('23-endpoint-add-plain-file');
    });

    await test.step('a stale socket nobody listens on', async () => {
      await app.endpoints.fillAddress(stale);
      await app.endpoints.connectButton.click();
      await expect(app.endpoints.error).toContainText(stale);
      await expect(app.endpoints.error).toContainText('nothing accepts connections on this socket');
    });

    await test.step('a socket that answers, but not gRPC', async () => {
      await app.endpoints.fillAddress(httpSock);
      await app.endpoints.connectButton.click();
      await expect(app.endpoints.error).toContainText(httpSock, { timeout: 30_000 });
      await expect(app.endpoints.error).toContainText('does not speak gRPC (HTTP/2): it is not a CRI socket');
      await app.screenshot('26-endpoint-add-http-socket');
    });

    await test.step('a relative path', async () => {
      await app.endpoints.fillAddress('containerd.sock');
      await app.endpoints.connectButton.click();
      await expect(app.endpoints.error).toContainText('InvalidArgument');
      await expect(app.endpoints.error).toContainText('absolute unix socket path');
    });

    await test.step('cancel: nothing was added, the local engine stays selected, the error is gone next time', async () => {
      await app.endpoints.cancel();
      expect((await env.endpoints.list()).map((e) => e.id)).toEqual(['local']);
      await expect(app.endpoints.switcher.locator('option')).toHaveCount(2);
      expect(await app.endpoints.selectedLabel()).toContain('built-in engine');
      await app.endpoints.openAddDialog();
      await expect(app.endpoints.error).toHaveCount(0);
      await app.endpoints.cancel();
    });
  } finally {
    for (const c of cleanups) await c();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('add the containerd endpoint and inspect a containerd pod', async ({ app, env, containerd }) => {
  const { page } = app;
  const id = await containerd.run({
    metadata: { name: 'ctd-web', namespace: 'e2e-ctd', uid: 'uid-ctd-web', attempt: 0 },
    hostname: 'ctd-web',
    labels: { suite: 'e2e', runtime: 'containerd' },
    port_mappings: [{ container_port: 80, host_port: HOST_PORT }, { container_port: 81 }],
    annotations: { 'kubernetes.io/ingress-bandwidth': '10M' },
  });
  // the pod lives in containerd only
  expect(await env.engine.list()).toEqual([]);
  const truth = await containerd.fixture.api.status(id);
  expect(truth.ip).toMatch(CTD_V4);

  await test.step('add the socket in the endpoint dialog: it becomes the selected endpoint', async () => {
    await app.pods.expectEmpty();
    await app.endpoints.add(containerd.socketPath, 'containerd (e2e)');
    expect(await app.endpoints.selectedLabel()).toBe('containerd (e2e)');
    // what answers there, and what it cannot give, is said next to the switcher
    await expect(app.endpoints.capabilityNote).toContainText('CRI · containerd 1.6.20');
    await expect(app.endpoints.capabilityNote.locator('[title]').filter({ hasText: 'containerd.sock' })).toHaveAttribute(
      'title',
      `unix://${containerd.socketPath}`,
    );
    // the live kernel view is not the runtime's to give: this process reads it in the pod's netns
    await expect(app.endpoints.capabilityNote).toContainText(
      /not from this runtime: CNI plugin trace, runtimeConfig preview, live events \(list re-read every few seconds\)$/,
    );
    await expect(app.endpoints.capabilityNote).not.toContainText('CNI config');
  });

  await test.step('the list shows the containerd pod with its IPv4 pod IP', async () => {
    await expect(app.pods.row('ctd-web')).toBeVisible();
    await expect(app.pods.row('ctd-web')).toContainText('e2e-ctd');
    await expect(app.pods.ipCell('ctd-web')).toHaveText(truth.ip);
    await expect(app.pods.row('ctd-web')).toContainText(CTD_V6_IN);
    await expect(app.pods.row('ctd-web')).toContainText('↓10M');
    // ListPodSandbox has no port mappings: the row reads them from the pod config in containerd's verbose status
    await expect(app.pods.row('ctd-web').locator('[data-col="host-ports"]')).toContainText(`${HOST_PORT}→80/tcp`);
    await app.screenshot('20-containerd-endpoint-list');
  });

  await test.step('network: primary IPv4, additional IPv6, eth0 from the cniResult, interfaces', async () => {
    await app.pods.open('ctd-web');
    await app.detail.tab('Network');
    await expect(app.detail.primaryIp).toContainText(truth.ip);
    await expect(app.detail.additionalIps).toContainText(CTD_V6_IN);
    await expect(page.getByText(`containerd reported ${truth.ip} as primary`)).toBeVisible();
    const eth0 = app.detail.eth0Rows;
    await expect(eth0).toHaveCount(2);
    await expect(eth0.nth(0)).toContainText(truth.ip);
    await expect(eth0.nth(0)).toContainText('primary');
    await expect(eth0.nth(1)).toContainText(CTD_V6_IN);
    await expect(eth0.nth(1)).toContainText('additional');
    const ifaces = app.detail.interfaceRows;
    const eth0Iface = app.detail.interfaceRow('eth0');
    await expect(eth0Iface).toHaveCount(1);
    await expect(eth0Iface).toHaveAttribute('data-side', 'sandbox');
    await expect(eth0Iface).toContainText(`${truth.ip}, ${truth.additionalIps[0]}`);
    await expect(eth0Iface).toContainText(`10.${CTD_SUBNET}.0.1, fd00:${CTD_SUBNET}::1`);
    await expect(app.detail.interfaceRow('lo')).toContainText('127.0.0.1');
    await expect(app.detail.interfaceRow(CTD_BRIDGE)).toHaveAttribute('data-side', 'host');
    await expect(ifaces.and(page.locator('[data-iface^="veth"][data-side="host"]'))).toHaveCount(1);
    // eth0, lo (the loopback network), the bridge and the host veth: go-cni's merged result, nothing added
    await expect(ifaces).toHaveCount(4);
    await expect(page.getByTestId('interfaces-source')).toContainText("runtime's merged CNI result");
    await app.screenshot('21-containerd-network');
  });

  await test.step('port mappings: the host-port-0 mapping is dropped and explained', async () => {
    await app.detail.tab('Port mappings');
    await expect(app.detail.portRows).toHaveCount(2);
    await expect(app.detail.portRows.nth(0)).toHaveAttribute('data-passed', 'true');
    await expect(app.detail.portRows.nth(0)).toContainText(String(HOST_PORT));
    await expect(app.detail.portRows.nth(1)).toHaveAttribute('data-passed', 'false');
    await expect(app.detail.portRows.nth(1)).toContainText('dropped before CNI');
    await expect(app.detail.portRows.nth(1)).toContainText('host_port 0');
    await expect(app.detail.portRows.nth(1)).toContainText('not passed to CNI');
    // derived from containerd's stored config, and said so
    await expect(page.getByTestId('ports-derived')).toContainText('does not expose what the portmap plugin actually received');
    await app.screenshot('24-containerd-ports');
  });

  await test.step("bandwidth: the annotation re-derived from containerd's stored config", async () => {
    await app.detail.tab('Bandwidth');
    await expect(app.detail.bandwidthRow('ingress')).toContainText('10000000');
    await expect(app.detail.bandwidthRow('ingress')).toContainText('10 Mbit/s');
    await expect(page.getByTestId('bw-received-unavailable')).toContainText('Not available from this runtime (containerd 1.6.20');
  });

  await test.step("the kernel's live view: read here in the pod's netns, the tbf containerd's bandwidth plugin made", async () => {
    // still on the Bandwidth tab: CRI carries no netns, tc or nat state; this process reads them from the kernel
    await app.detail.expectLiveRead('live-bandwidth');
    await expect(app.detail.bandwidthLive('ingress')).toContainText('tbf 10 Mbit/s');
  });

  await test.step('CNI trace: not available from this runtime, nothing faked', async () => {
    await app.detail.tab('CNI trace');
    await expect(page.getByText('CNI plugin trace: not available from this runtime')).toBeVisible();
    await expect(page.getByText(/This endpoint \(containerd 1\.6\.20\S*\) speaks CRI only/)).toBeVisible();
    await expect(app.detail.traceItems).toHaveCount(0);
    // the tab badge says n/a, not "0 calls"
    await expect(app.detail.tabButton('CNI trace')).toContainText('n/a');
    await app.screenshot('25-containerd-cni-trace');
    await app.detail.tab('Lifecycle');
    await expect(page.getByText('Lifecycle steps: not available from this runtime')).toBeVisible();
  });

  await test.step("back to the built-in engine: its (empty) list, not containerd's", async () => {
    await app.endpoints.select('built-in engine');
    await app.pods.expectEmpty();
  });
});
