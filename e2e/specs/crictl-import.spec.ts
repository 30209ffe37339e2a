import { test, expect } from '../support/fixtures';
import { e2ePort } from '../support/sandbox-env';

const HOST_PORT = e2ePort(6);

const POD_JSON = JSON.stringify(
  {
    metadata: { name: 'imported', namespace: 'team-a', uid: 'c0ffee-1', attempt: 1 },
    hostname: 'imported-host',
    log_directory: '/tmp/imported-logs',
    dns_config: { servers: ['10.96.0.10'], searches: ['svc.cluster.local'], options: ['ndots:5'] },
    port_mappings: [
      { protocol: 0, container_port: 80, host_port: HOST_PORT, host_ip: '127.0.0.1' },
      { protocol: 1, container_port: 53, host_port: 0 },
    ],
    labels: { app: 'imported', tier: 'web' },
    annotations: { 'kubernetes.io/ingress-bandwidth': '20M', 'example.com/owner': 'e2e' },
    linux: { cgroup_parent: '', security_context: { namespace_options: { network: 0 } } },
    portMappings: [],
  },
  null,
  2,
);

test('a crictl JSON import fills the form and warns about unknown keys', async ({ app }) => {
  await app.goto('New sandbox');
  await app.form.importCrictl(POD_JSON);
  const f = app.form;
  await expect(f.field('Name')).toHaveValue('imported');
  await expect(f.field('Namespace')).toHaveValue('team-a');
  await expect(f.field('UID')).toHaveValue('c0ffee-1');
  await expect(f.field('Attempt')).toHaveValue('1');
  await expect(f.field('Hostname')).toHaveValue('imported-host');
  await expect(f.field('Port 1 container port')).toHaveValue('80');
  await expect(f.field('Port 1 host port')).toHaveValue(String(HOST_PORT));
  await expect(f.field('Port 1 host IP')).toHaveValue('127.0.0.1');
  await expect(f.field('Port 2 protocol')).toHaveValue('UDP');
  await expect(f.field('Port 2 host port')).toHaveValue('0');
  await expect(f.field('ingress bandwidth')).toHaveValue('20');
  await expect(f.field('ingress bandwidth unit')).toHaveValue('M');
  await expect(f.field('label 1 key')).toHaveValue('app');
  await expect(f.field('annotation 1 key')).toHaveValue('example.com/owner');
  await expect(f.field('Servers')).toHaveValue('10.96.0.10');
  const notice = app.page.getByTestId('import-notice');
  await expect(notice).toContainText('portMappings: unknown key');
  await expect(notice).toContainText('did you mean "port_mappings"');
  // the exported JSON keeps crictl's shape, log_directory included
  await app.page.getByRole('tab', { name: 'crictl JSON' }).click();
  await expect(app.page.getByTestId('preview-json')).toContainText('"log_directory": "/tmp/imported-logs"');
  await expect(app.page.getByTestId('preview-json')).toContainText('"protocol": 1');
  await app.screenshot('13-crictl-import');
});
