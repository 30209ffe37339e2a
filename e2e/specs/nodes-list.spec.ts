/**
 * The pods of two nodes in one list: the built-in engine (this machine) and a real containerd (its own socket and
 * network, e2e/support/containerd-env.ts). Adding containerd lists its pods alone; the Node filter adds this machine's
 * beside them, every row naming its node in the Node column; unticking a node drops its rows; opening a pod of the
 * other node makes it the node the screens talk to.
 */
import { test, expect } from '../support/fixtures';
import { LOCAL_ENDPOINT_LABEL } from '../../shared/domain/endpoints';

const CTD_LABEL = 'containerd (e2e)';

test('Node column and Node filter: the pods of this machine and of a containerd node listed together, each with its node', async ({
  app,
  env,
  containerd,
}) => {
  const { page } = app;
  await env.engine.run({ config: { metadata: { name: 'local-web', namespace: 'e2e', uid: 'u-nodes-local' } } });
  await containerd.run({ metadata: { name: 'ctd-web', namespace: 'e2e-ctd', uid: 'u-nodes-ctd', attempt: 0 }, hostname: 'ctd-web' });

  await app.goto('Sandboxes');
  await expect(app.pods.row('local-web')).toBeVisible();
  // one node: no Node column, no Node filter
  await expect(page.getByRole('columnheader', { name: 'Node' })).toHaveCount(0);
  await expect(page.getByTestId('node-filter')).toHaveCount(0);

  await app.endpoints.add(containerd.socketPath, CTD_LABEL);
  // the sidebar's choice lists that node alone
  await expect(app.pods.row('ctd-web')).toBeVisible();
  await expect(app.pods.row('local-web')).toHaveCount(0);
  await expect(page.getByRole('columnheader', { name: 'Node' })).toBeVisible();
  await expect(app.pods.row('ctd-web').locator('[data-col="node"]')).toHaveText(CTD_LABEL);

  const filter = page.getByTestId('node-filter');
  await expect(filter).toContainText(`Node: ${CTD_LABEL}`);
  await filter.locator('summary').click();
  await filter.getByRole('checkbox', { name: LOCAL_ENDPOINT_LABEL }).check();
  await expect(app.pods.row('local-web')).toBeVisible();
  await expect(app.pods.row('ctd-web')).toBeVisible();
  await expect(filter).toContainText('Node: All nodes');
  await expect(app.pods.row('local-web').locator('[data-col="node"]')).toHaveText(LOCAL_ENDPOINT_LABEL);
  await expect(app.pods.row('ctd-web').locator('[data-col="node"]')).toHaveText(CTD_LABEL);
  await expect(page.getByText('2 sandboxes')).toBeVisible();
  // the last node listed cannot be unticked alone: the other one can
  await expect(filter.getByRole('checkbox', { name: CTD_LABEL })).toBeEnabled();
  await app.screenshot('nodes-01-two-nodes-listed');
  await filter.locator('summary').click();

  // a pod of this machine opened while containerd is the sidebar's node: the screens talk to this machine
  await app.pods.open('local-web');
  await expect.poll(() => app.endpoints.selectedLabel()).toBe(LOCAL_ENDPOINT_LABEL);
  await expect(app.detail.header).toContainText('local-web');
  // both nodes stay listed
  await expect(app.pods.row('ctd-web')).toBeVisible();
  await app.pods.open('ctd-web');
  await expect.poll(() => app.endpoints.selectedLabel()).toBe(CTD_LABEL);
  await expect(app.detail.header).toContainText('ctd-web');
  await app.screenshot('nodes-02-other-node-pod-open');

  // unticking containerd drops its rows (and closes its pod's detail)
  await filter.locator('summary').click();
  await filter.getByRole('checkbox', { name: CTD_LABEL }).uncheck();
  await expect(app.pods.row('ctd-web')).toHaveCount(0);
  await expect(app.pods.row('local-web')).toBeVisible();
  await expect(filter.getByRole('checkbox', { name: LOCAL_ENDPOINT_LABEL })).toBeDisabled();
  await expect(filter).toContainText(`Node: ${LOCAL_ENDPOINT_LABEL}`);
});
