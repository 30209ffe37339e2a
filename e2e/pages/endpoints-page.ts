import { expect, type Locator, type Page } from '@playwright/test';

/** The sidebar's node switcher and its "Add a node" dialog (discovered nodes, or a socket path). */
export class EndpointsPage {
  readonly switcher: Locator;
  readonly dialog: Locator;
  constructor(private readonly page: Page) {
    this.switcher = page.getByRole('navigation', { name: 'Main' }).getByRole('combobox', { name: 'Node' });
    this.dialog = page.getByRole('dialog', { name: 'Add a node' });
  }

  get socketPath(): Locator {
    return this.dialog.getByLabel('Or a socket path', { exact: true });
  }
  get label(): Locator {
    return this.dialog.getByLabel('Label (optional)', { exact: true });
  }
  get connectButton(): Locator {
    return this.dialog.getByRole('button', { name: /^(Connect|Connecting…)$/ });
  }
  /** the inline error the dialog shows when the address is not a usable CRI socket */
  get error(): Locator {
    return this.dialog.getByRole('alert');
  }
  /** the nodes discovered on this machine, one row each */
  get discoveredNodes(): Locator {
    return this.dialog.getByTestId('discovered-node');
  }
  /** what the switcher shows about the selected endpoint's missing capabilities */
  get capabilityNote(): Locator {
    return this.page.getByTestId('endpoint-capabilities');
  }

  async openAddDialog() {
    await this.switcher.selectOption({ label: 'Add node…' });
    await expect(this.dialog).toBeVisible();
  }

  async fillAddress(address: string, label?: string) {
    await this.socketPath.fill(address);
    if (label !== undefined) await this.label.fill(label);
  }

  /** connect and wait for the dialog to close (the new endpoint becomes the selected one) */
  async add(address: string, label?: string) {
    await this.openAddDialog();
    await this.fillAddress(address, label);
    await this.connectButton.click();
    await expect(this.dialog).toBeHidden({ timeout: 30_000 });
  }

  async cancel() {
    await this.dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(this.dialog).toBeHidden();
  }

  /** the option text of the selected endpoint */
  async selectedLabel(): Promise<string> {
    return this.switcher.locator('option:checked').innerText();
  }

  async select(label: string | RegExp) {
    const options = await this.switcher.locator('option').allInnerTexts();
    const match = options.find((o) => (typeof label === 'string' ? o.includes(label) : label.test(o)));
    if (!match) throw new Error(`no endpoint option matching ${String(label)} in ${JSON.stringify(options)}`);
    await this.switcher.selectOption({ label: match });
  }
}
