import { expect, type Locator, type Page } from '@playwright/test';

/** The pod detail's Containers tab: the table, the selected container's pane (details, logs, terminal), forwards. */
export class ContainersPage {
  constructor(private readonly page: Page) {}

  /** gives the open pod's detail most of the height (the split handle, moved with the keyboard as a user can) */
  async roomForDetail() {
    const handle = this.page.getByRole('separator', { name: 'Resize the list and the detail' });
    await handle.focus();
    for (let i = 0; i < 6; i++) await handle.press('ArrowUp');
  }

  async open() {
    await this.page
      .getByRole('tablist', { name: 'Sandbox detail' })
      .getByRole('tab', { name: /^Containers/ })
      .click();
  }

  row(name: string): Locator {
    return this.page.getByRole('table', { name: 'Containers' }).locator(`tr[data-container-name="${name}"]`);
  }

  pane(name: string): Locator {
    return this.page.getByRole('region', { name: `Container ${name}` });
  }

  async view(name: string, view: 'Details' | 'Logs' | 'Terminal') {
    await this.row(name).click();
    await this.pane(name).getByRole('tablist', { name: 'Container view' }).getByRole('tab', { name: view }).click();
  }

  get logLines(): Locator {
    return this.page.getByRole('log', { name: 'Log lines' });
  }

  /** xterm.js draws its rows as DOM (no canvas renderer is loaded): their text is what the user sees */
  get terminalRows(): Locator {
    return this.page.getByTestId('terminal').locator('.xterm-rows');
  }

  get terminalState(): Locator {
    return this.page.getByTestId('terminal-state');
  }

  async typeInTerminal(text: string) {
    await this.page.getByTestId('terminal').click();
    await this.page.keyboard.type(text);
    await this.page.keyboard.press('Enter');
  }

  /** the terminal's size as the UI shows it ("connected · 120×30"), once connected */
  async terminalSize(): Promise<{ cols: number; rows: number }> {
    await expect(this.terminalState).toContainText(/connected · \d+×\d+/);
    const m = /(\d+)×(\d+)/.exec((await this.terminalState.textContent()) ?? '')!;
    return { cols: Number(m[1]), rows: Number(m[2]) };
  }

  async forward(port: number): Promise<{ hostPort: number; row: Locator }> {
    const form = this.page.getByRole('form', { name: 'Forward a port' });
    await form.getByLabel('Pod port').fill(String(port));
    await form.getByRole('button', { name: 'Forward port' }).click();
    const row = this.page.getByTestId('forward-row').filter({ has: this.page.locator('td', { hasText: new RegExp(`^${port}$`) }) });
    await expect(row).toBeVisible();
    const address = (await row.getByTestId('forward-address').textContent()) ?? '';
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    return { hostPort: Number(address.split(':')[1]), row };
  }
}
