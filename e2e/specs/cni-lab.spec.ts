import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { test, expect } from '../support/fixtures';
import { E2E_LEASE, E2E_NETWORK } from '../support/sandbox-env';

// the lab run's own bridge and subnet, apart from the e2e network: from the worker's lease (testkit/allocator.ts), as
// every other test's (still overridable by hand)
const BRIDGE = process.env.PODSCOPE_E2E_LAB_BRIDGE ?? E2E_LEASE.name('lab1');
const SUBNET = process.env.PODSCOPE_E2E_LAB_SUBNET ?? E2E_LEASE.subnet4(8);

test('CNI lab: open a network from the CNI panel, an edit error shows at its line, run, see the trace and the leak verdict', async ({
  app,
  env,
}) => {
  const ipamDir = mkdtempSync('/tmp/podscope-l1-e2e-');
  try {
    await app.goto('CNI config');
    await app.page.getByRole('button', { name: 'Open in lab' }).last().click();
    // the CodeMirror editor's content element (a labelled textbox; fill replaces its text as typing would)
    const editor = app.page.getByLabel('Conflist');
    await expect(editor).toContainText(`"name": "${E2E_NETWORK}"`);
    await expect(app.page.getByTestId('lab-plugins')).toContainText('/usr/lib/cni/bridge');

    // a stray comma: refused with its position, Run disabled
    await editor.fill('{\n  "cniVersion": "1.0.0",\n  "name": "x",\n  "plugins": [ { "type": "bridge", } ]\n}');
    await expect(app.page.getByTestId('lab-issues')).toContainText('line 4, column 36');
    await expect(app.page.getByRole('button', { name: 'Run', exact: true })).toBeDisabled();

    const conflist: { cniVersion: string; name: string; plugins: Array<Record<string, unknown>> } = {
      cniVersion: '1.0.0',
      name: BRIDGE,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: false,
          ipam: { type: 'host-local', dataDir: ipamDir, ranges: [[{ subnet: SUBNET }]] },
        },
        { type: 'portmap', capabilities: { portMappings: true }, snat: false },
        { type: 'bandwidth', capabilities: { bandwidth: true } },
      ],
    };
    await editor.fill(JSON.stringify(conflist, null, 2));
    await app.page.getByLabel('port mappings').fill('28777:80/tcp');
    await app.page.getByLabel('ingress bit/s').fill('1000000');
    await expect(app.page.getByText('valid', { exact: true })).toBeVisible();
    // runs are kept in the state dir the specs share: count from what earlier specs left
    const rows = app.page.getByTestId('lab-runs').locator('tbody tr');
    const before = await rows.count();
    await app.page.getByRole('button', { name: 'Run', exact: true }).click();

    const run = app.page.getByTestId('lab-run');
    await expect(run).toBeVisible();
    const trace = run.getByTestId('lab-trace');
    // ADD ×3; CHECK bridge, portmap (Debian's portmap 1.1.1 fails it: a known defect), bandwidth checked past it; DEL ×3
    await expect(trace.locator(':scope > li')).toHaveCount(9);
    await expect(trace).toContainText('portmap');
    await expect(trace.locator('li[data-known-defect="true"]')).toContainText('known defect');
    await expect(trace).toContainText("checked past #1's known defect");
    await expect(run.getByText('CHECK ok, with a known plugin defect')).toBeVisible();
    await expect(run.getByTestId('lab-known-defect')).toContainText('plugins/issues/819');
    await expect(run.getByText('success', { exact: true })).toBeVisible();
    await expect(run.getByTestId('lab-verdict')).toContainText('No leak');
    await expect(run).toContainText('--dport 28777 -j DNAT');
    await trace.locator('li').first().locator('summary').click();
    await expect(trace.locator('li').first()).toContainText(`"bridge": "${BRIDGE}"`);
    await expect(rows).toHaveCount(before + 1);
    await app.screenshot('30-cni-lab-run');
    expect((await env.engine.list()).length).toBe(0); // a lab run is not a sandbox

    // one field changed, run again, compare the two runs side by side
    const first = (await app.page.getByTestId('lab-runs').locator('tbody tr').first().locator('button.link').textContent())!;
    conflist.plugins[0] = { ...conflist.plugins[0], mtu: 1400 };
    await editor.fill(JSON.stringify(conflist, null, 2));
    await expect(app.page.getByText('valid', { exact: true })).toBeVisible();
    await app.page.getByRole('button', { name: 'Run', exact: true }).click();
    await expect(rows).toHaveCount(before + 2);
    const second = (await app.page.getByTestId('lab-runs').locator('tbody tr').first().locator('button.link').textContent())!;
    expect(second).not.toBe(first);
    await app.page.getByLabel(`a ${first}`).check();
    await app.page.getByLabel(`b ${second}`).check();
    const diff = app.page.getByTestId('lab-diff');
    await expect(diff.locator('.card').first()).toContainText('differs');
    await expect(diff.locator('.card').first()).toContainText('mtu');
    await expect(diff).toContainText('eth0 veth mtu 1400');
    await diff.scrollIntoViewIfNeeded();
    await app.screenshot('31-cni-lab-diff');
  } finally {
    try {
      execFileSync('ip', ['link', 'del', BRIDGE], { stdio: 'ignore' });
    } catch {
      // never created
    }
    rmSync(ipamDir, { recursive: true, force: true });
  }
});
