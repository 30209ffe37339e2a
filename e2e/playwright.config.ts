/**
 * E2E against browser mode with the real engine and Debian's CNI plugins (needs root). The system Chromium is used;
 * browsers are never downloaded. PODSCOPE_E2E_TARGET=electron runs the same specs through Playwright's Electron
 * launcher where an Electron binary exists (it cannot be downloaded on this machine, so that project skips here).
 */
import { defineConfig } from '@playwright/test';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export default defineConfig({
  testDir: './specs',
  outputDir: './artifacts/test-results',
  globalSetup: './support/global-setup.ts',
  // One engine, one bridge: specs share host state, so they run one at a time.
  workers: 1,
  fullyParallel: false,
  timeout: 90_000,
  expect: { timeout: 20_000 },
  reporter: [['list'], ['html', { outputFolder: './artifacts/report', open: 'never' }]],
  use: {
    viewport: { width: 1440, height: 900 },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: { executablePath: process.env.PODSCOPE_CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS },
  },
  projects: [{ name: process.env.PODSCOPE_E2E_TARGET === 'electron' ? 'electron' : 'browser-mode', use: { browserName: 'chromium' } }],
});
