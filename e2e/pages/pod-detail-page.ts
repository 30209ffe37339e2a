import { expect, type Locator, type Page } from '@playwright/test';

export type DetailTabName = 'Overview' | 'Network' | 'Port mappings' | 'Bandwidth' | 'CNI trace' | 'Lifecycle' | 'Raw status';

export class PodDetailPage {
  readonly header: Locator;
  constructor(private readonly page: Page) {
    this.header = page.locator('.detail-head');
  }

  async tab(name: DetailTabName) {
    await this.page.getByRole('tablist', { name: 'Sandbox detail' }).getByRole('tab', { name: new RegExp(`^${name}`) }).click();
  }

  get primaryIp(): Locator {
    return this.page.getByTestId('primary-ip');
  }
  get additionalIps(): Locator {
    return this.page.getByTestId('additional-ips');
  }
  get portRows(): Locator {
    return this.page.getByTestId('port-mappings').locator('tbody tr');
  }
  get traceItems(): Locator {
    return this.page.getByTestId('cni-trace').locator('li');
  }
  bandwidthRow(dir: 'ingress' | 'egress'): Locator {
    return this.page.getByTestId(`bw-${dir}`);
  }

  async stop() {
    await this.header.getByRole('button', { name: 'Stop' }).click();
  }

  async remove() {
    await this.header.getByRole('button', { name: 'Remove' }).click();
    const dialog = this.page.getByRole('dialog');
    await expect(dialog).toBeVisible();
    await dialog.getByRole('button', { name: 'Remove' }).click();
  }

  async expectState(text: 'Ready' | 'NotReady') {
    await expect(this.header.locator('.pill', { hasText: new RegExp(`^${text}$`) })).toBeVisible();
  }
}
