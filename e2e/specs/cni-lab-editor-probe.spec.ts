import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { test, expect } from '../support/fixtures';
import { e2ePort } from '../support/sandbox-env';

// this spec's lab runs get their own bridge and subnet (overridable so runs sharing a host each use their own)
const BRIDGE = process.env.PODSCOPE_E2E_PROBE_BRIDGE ?? 'psl-labe2e';
const SUBNET = process.env.PODSCOPE_E2E_PROBE_SUBNET ?? '10.88.252.128/25';
const HOST_PORT = e2ePort(3);

const BAD = '{\n  "cniVersion": "1.0.0",\n  "name": "x",\n  "plugins": [ { "type": "bridge", } ]\n}';

test('CNI lab editor: invalid JSON is underlined at the parser position, listed with line and column, and Run is disabled', async ({
  app,
}) => {
  // CSP violations other than style attributes: Chrome's own editing code sets those when text replaces a
  // multi-line selection in a contenteditable (refused, harmless: CodeMirror redraws the lines); a refused <style>
  // element or image would mean the editor is unstyled
  await app.page.evaluate(() => {
    const w = window as unknown as { cspViolations: string[] };
    w.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      if (e.violatedDirective !== 'style-src-attr') w.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  await app.goto('CNI lab');
  const editor = app.page.getByLabel('Conflist');
  await expect(editor).toBeVisible();
  await editor.fill(BAD);
  await expect(app.page.getByTestId('lab-issues')).toContainText('line 4, column 36');
  // the underline sits on the character the parser stopped at, on line 4
  const mark = app.page.locator('.cm-lintRange-error');
  await expect(mark).toHaveCount(1);
  await expect(mark).toHaveText('}');
  await expect(app.page.locator('.cm-lint-marker-error')).toHaveCount(1);
  await expect(app.page.getByRole('button', { name: 'Run', exact: true })).toBeDisabled();
  // JSON is highlighted (property names and strings carry their own token styles)
  const keyColor = await editor.getByText('"cniVersion"').evaluate((e) => getComputedStyle(e).color);
  const valueColor = await editor.getByText('"1.0.0"').evaluate((e) => getComputedStyle(e).color);
  expect(keyColor).not.toBe(valueColor);
  // the message is there on hover, where the error is
  await mark.hover();
  await expect(app.page.locator('.cm-tooltip-lint')).toContainText('JSON');
  await app.screenshot('40-cni-lab-invalid-json');
  // keyboard: the button puts the cursor on the error; typing there fixes it
  await app.page.getByRole('button', { name: 'line 4, column 36' }).click();
  await expect(editor).toBeFocused();
  await app.page.keyboard.press('ArrowLeft');
  await app.page.keyboard.press('Backspace');
  await app.page.keyboard.press('Backspace');
  await expect(app.page.getByText('valid', { exact: true })).toBeVisible();
  await expect(mark).toHaveCount(0);
  expect(await app.page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations), 'CSP refusals').toEqual([]);
});

test('CNI lab: a run with probe shows the probe verdict (host → netns and host port reachable) between CHECK and DEL', async ({ app }) => {
  const ipamDir = mkdtempSync('/tmp/psl-e2e-ipam-');
  try {
    await app.goto('CNI lab');
    const conflist = {
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
        { type: 'portmap', capabilities: { portMappings: true }, snat: true },
      ],
    };
    await app.page.getByLabel('Conflist').fill(JSON.stringify(conflist, null, 2));
    await app.page.getByLabel('port mappings').fill(`${HOST_PORT}:8080/tcp`);
    await app.page.getByLabel(/probe reachability/).check();
    await expect(app.page.getByText('valid', { exact: true })).toBeVisible();
    await app.page.getByRole('button', { name: 'Run', exact: true }).click();

    const run = app.page.getByTestId('lab-run');
    await expect(run).toBeVisible();
    const probe = run.getByTestId('lab-probe');
    await expect(probe.getByTestId('lab-probe-verdict')).toHaveText('reachable: 3 paths');
    await expect(probe).toContainText(`127.0.0.1:${HOST_PORT}/tcp`);
    await expect(probe).toContainText('measured');
    // in the trace the probe comes after CHECK and before the first DEL
    const heads = await run
      .getByTestId('lab-trace')
      .locator(':scope > li')
      .evaluateAll((lis) =>
        lis.map((li) => (li.getAttribute('data-testid') === 'lab-probe' ? 'PROBE' : (li.querySelector('.pill')?.textContent ?? ''))),
      );
    expect(heads.indexOf('PROBE')).toBe(heads.indexOf('DEL') - 1);
    expect(heads.lastIndexOf('CHECK')).toBeLessThan(heads.indexOf('PROBE'));
    await expect(run.getByTestId('lab-verdict')).toContainText('No leak');
    await probe.scrollIntoViewIfNeeded();
    await app.screenshot('41-cni-lab-run-with-probe');
  } finally {
    try {
      execFileSync('ip', ['link', 'del', BRIDGE], { stdio: 'ignore' });
    } catch {
      // never created
    }
    rmSync(ipamDir, { recursive: true, force: true });
  }
});
