import { expect, type Locator, type Page } from '@playwright/test';

export type DetailTabName = 'Overview' | 'Network' | 'Port mappings' | 'Bandwidth' | 'CNI trace' | 'Lifecycle' | 'Raw status';

export class PodDetailPage {
  readonly header: Locator;
  constructor(private readonly page: Page) {
    this.header = page.locator('.detail-head');
  }

  tabButton(name: DetailTabName): Locator {
    return this.page.getByRole('tablist', { name: 'Sandbox detail' }).getByRole('tab', { name: new RegExp(`^${name}`) });
  }

  async tab(name: DetailTabName) {
    await this.tabButton(name).click();
  }

  get primaryIp(): Locator {
    return this.page.getByTestId('primary-ip');
  }
  get additionalIps(): Locator {
    return this.page.getByTestId('additional-ips');
  }
  /** Network tab: eth0's addresses in CNI result order */
  get eth0Rows(): Locator {
    return this.page.getByTestId('eth0-ips').locator('tbody tr');
  }
  /** Network tab: one row per interface the CNI result lists */
  get interfaceRows(): Locator {
    return this.page.getByTestId('interfaces').locator('tbody tr');
  }
  /** Network tab: the interface row with exactly this name */
  interfaceRow(name: string): Locator {
    return this.page.getByTestId('interfaces').locator(`tbody tr[data-iface="${name}"]`);
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
