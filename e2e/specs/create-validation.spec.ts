import { test, expect } from '../support/fixtures';

test('an invalid bandwidth (10X) shows an inline error and creates nothing', async ({ app, env }) => {
  await app.goto('New sandbox');
  await app.form.fillMetadata('e2e-bad-bw', 'e2e');
  await app.form.setBandwidth('ingress', '10X', '');
  // validated as you type, with containerd's quantity grammar, and said in terms of what to type
  await expect(app.form.bandwidthError('ingress')).toContainText('"10X" is not a bandwidth. Accepted: bits per second from 1k to 1P');
  await app.form.submit();
  await expect(app.page.getByTestId('form-error-summary')).toContainText('nothing was created');
  await expect(app.form.field('ingress bandwidth')).toBeFocused();
  await app.screenshot('12-invalid-bandwidth');
  await expect(app.page.getByTestId('run-progress')).toHaveCount(0);
  expect(await env.engine.list()).toEqual([]);
});
