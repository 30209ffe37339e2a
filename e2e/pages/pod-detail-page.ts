import { expect, type Locator, type Page } from '@playwright/test';

export type DetailTabName =
  | 'Overview'
  | 'Network'
  | 'Reachability'
  | 'Port mappings'
  | 'Bandwidth'
  | 'CNI trace'
  | 'Lifecycle'
  | 'Raw status';

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

  /** A "what the kernel says now" section: live-network (Network tab), live-ports, live-bandwidth */
  live(section: 'live-network' | 'live-ports' | 'live-bandwidth'): Locator {
    return this.page.getByTestId(section);
  }
  /** waits until the section shows a collected view (not loading, not absent, not an error) */
  async expectLiveRead(section: 'live-network' | 'live-ports' | 'live-bandwidth') {
    await expect(this.live(section)).toHaveAttribute('data-live-state', 'ok');
    await expect(this.live(section).getByTestId('live-collected-at')).toBeVisible();
  }
  /** Bandwidth tab: one row per direction, requested → passed to the plugin → applied in the kernel → verdict */
  bandwidthLive(dir: 'ingress' | 'egress'): Locator {
    return this.page.getByTestId(`bw-live-${dir}`);
  }
  /** Ports tab: the live DNAT row for the mapping at this index of port_mappings */
  livePortRow(index: number): Locator {
    return this.page.getByTestId('live-port-rows').locator(`tbody tr[data-index="${index}"]`);
  }
  /** Network tab: a live interface row (ip addr inside the netns) */
  liveInterface(name: string): Locator {
    return this.page.getByTestId('live-interfaces').locator(`tbody tr[data-iface="${name}"]`);
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
