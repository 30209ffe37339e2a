import { expect, type Locator, type Page } from '@playwright/test';

export class PodsListPage {
  readonly grid: Locator;
  constructor(private readonly page: Page) {
    this.grid = page.getByRole('grid', { name: 'Pod sandboxes' });
  }

  row(name: string): Locator {
    return this.page.locator(`[role="row"][data-pod-name="${name}"]`);
  }

  ipCell(name: string): Locator {
    return this.row(name).locator('[data-col="ip"]');
  }

  async open(name: string) {
    await this.row(name).click();
  }

  async expectEmpty() {
    await expect(this.page.getByText('No pod sandboxes yet')).toBeVisible();
  }
}
