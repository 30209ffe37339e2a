import { expect, type Locator, type Page } from '@playwright/test';

export interface PortInput {
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  containerPort: number;
  hostPort: number;
  hostIp?: string;
}

export class CreateFormPage {
  readonly form: Locator;
  constructor(private readonly page: Page) {
    this.form = page.getByRole('form', { name: 'Create sandbox' });
  }

  field(label: string): Locator {
    return this.form.getByLabel(label, { exact: true });
  }

  async fillMetadata(name: string, namespace = 'default') {
    await this.field('Name').fill(name);
    await this.field('Namespace').fill(namespace);
  }

  async addPort(i: number, p: PortInput) {
    await this.form.getByRole('button', { name: '+ Add port mapping' }).click();
    if (p.protocol) await this.field(`Port ${i} protocol`).selectOption(p.protocol);
    await this.field(`Port ${i} container port`).fill(String(p.containerPort));
    await this.field(`Port ${i} host port`).fill(String(p.hostPort));
    if (p.hostIp) await this.field(`Port ${i} host IP`).fill(p.hostIp);
  }

  /** value as typed, unit '' for none */
  async setBandwidth(dir: 'ingress' | 'egress', value: string, unit: '' | 'k' | 'M' | 'G' | 'Ki' | 'Mi' = '') {
    await this.field(`${dir} bandwidth unit`).selectOption(unit);
    await this.field(`${dir} bandwidth`).fill(value);
  }

  bandwidthError(dir: 'ingress' | 'egress'): Locator {
    return this.page.getByTestId(`${dir}-error`);
  }

  pluginPreview(type: string): Locator {
    return this.page.getByTestId('preview-plugins').locator(`[data-plugin="${type}"]`);
  }

  async submit() {
    await this.form.getByRole('button', { name: 'Create sandbox' }).click();
  }

  async waitCreated() {
    await expect(this.page.getByTestId('run-progress').getByText('Sandbox created')).toBeVisible({ timeout: 60_000 });
  }

  async openCreated() {
    await this.page.getByRole('button', { name: 'Open sandbox' }).click();
  }

  async importCrictl(text: string) {
    await this.form.getByRole('button', { name: 'Import crictl…' }).click();
    const dialog = this.page.getByRole('dialog', { name: 'Import a crictl pod config' });
    await dialog.getByLabel('crictl pod config').fill(text);
    await dialog.getByRole('button', { name: 'Import' }).click();
    await expect(dialog).toBeHidden();
  }
}
