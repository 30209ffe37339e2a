import { expect, type Page, type TestInfo } from '@playwright/test';
import { fileURLToPath } from 'node:url';
import { CreateFormPage } from './create-form-page';
import { EndpointsPage } from './endpoints-page';
import { PodDetailPage } from './pod-detail-page';
import { PodsListPage } from './pods-list-page';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

/** The whole window: navigation plus the feature page objects. */
export class AppPage {
  readonly pods: PodsListPage;
  readonly detail: PodDetailPage;
  readonly form: CreateFormPage;
  readonly endpoints: EndpointsPage;
  constructor(
    readonly page: Page,
    private readonly testInfo: TestInfo,
  ) {
    this.pods = new PodsListPage(page);
    this.detail = new PodDetailPage(page);
    this.form = new CreateFormPage(page);
    this.endpoints = new EndpointsPage(page);
  }

  async goto(view: 'Sandboxes' | 'New sandbox' | 'CNI config' | 'CNI lab' | 'Engine') {
    await this.page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('button', { name: new RegExp(`^${view}`) })
      .click();
  }

  /** Saves a named screenshot under e2e/artifacts/ and attaches it to the report. */
  async screenshot(name: string) {
    const path = `${ARTIFACTS}${name}.png`;
    await this.page.screenshot({ path });
    await this.testInfo.attach(name, { path, contentType: 'image/png' });
  }

  async expectNoEngineProblems() {
    await expect(this.page.getByTestId('engine-problems')).toHaveCount(0);
  }
}
