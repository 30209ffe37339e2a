/**
 * E2E against browser mode with the real engine and Debian's CNI plugins (needs root). The system Chromium is used;
 * browsers are never downloaded. PODSCOPE_E2E_TARGET=electron runs the same specs through Playwright's Electron
 * launcher where an Electron binary exists (it cannot be downloaded on this machine, so that project skips here).
 */
import { existsSync } from 'node:fs';
import { defineConfig } from '@playwright/test';
import { SHARED_HOST_ENV } from '../testkit/host-cleanup';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Debian's chromium-headless-shell where it is installed (scripts/setup.sh installs it): the same Blink and V8 as
 * /usr/bin/chromium without the desktop browser around them, which Playwright's own headless runs use too; it cost
 * 20% less CPU over the UI-heavy specs (31.9 against 38.8 CPU s for issue14-tour + glance-tour). PODSCOPE_CHROMIUM
 * names another binary.
 */
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';
const CHROMIUM = process.env.PODSCOPE_CHROMIUM ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');

/** PODSCOPE_E2E_WORKERS overrides; three on this project's 2-core machines (a spec spends much of its time waiting
 * for the engine, runc and the plugins; four did no better beside the real files, whose CPU they share) */
const E2E_WORKERS = Number(process.env.PODSCOPE_E2E_WORKERS ?? 3);
// the workers inherit it: none of them removes portmap's shared chains (see e2e/support/global-setup.ts)
process.env[SHARED_HOST_ENV] = '1';
// and pods without dns_config get a resolv.conf with no nameserver: no probe sends DNS off this host
process.env.PODSCOPE_RESOLV_CONF = new URL('../testkit/resolv.conf', import.meta.url).pathname;

export default defineConfig({
  testDir: './specs',
  outputDir: './artifacts/test-results',
  globalSetup: './support/global-setup.ts',
  // Spec files run in several workers, each with an engine, bridge, subnets and host ports of its own (a lease of
  // testkit/allocator.ts, e2e/support/sandbox-env.ts); the tests of one file run in order in one worker. The one
  // containerd at a time is a lock of containerd-env.ts; the host-global cleanup is the global setup's teardown.
  workers: E2E_WORKERS,
  fullyParallel: false,
  // A failed test runs once more, with a trace: one that passes then is reported as flaky (npm test's summary lists
  // it by name) rather than failing a whole CI run for a machine's hiccup; one that fails twice fails.
  // PODSCOPE_E2E_RETRIES=0 runs each test once.
  retries: Number(process.env.PODSCOPE_E2E_RETRIES ?? 1),
  timeout: 90_000,
  expect: { timeout: 20_000 },
  reporter: [['list'], ['html', { outputFolder: './artifacts/report', open: 'never' }]],
  use: {
    viewport: { width: 1440, height: 900 },
    // the user setting the app honours (renderer/src/lib/motion.ts, the spinner's CSS): no spinner frames to
    // composite while a step runs, scrolls land at once; no spec is about motion
    reducedMotion: 'reduce',
    screenshot: 'only-on-failure',
    // DOM snapshots, console and network of every action, recorded on a failed test's second run (recording them on
    // every run cost CPU on every run for traces almost never read); without the screencast frames, which cost a
    // sixth of the specs' CPU (69.8 → 59.1 CPU s over glance-tour + issue14-tour) for pictures the snapshots and the
    // failure screenshot already give
    trace: { mode: 'on-first-retry', screenshots: false },
    launchOptions: { executablePath: CHROMIUM, args: CHROMIUM_ARGS },
  },
  projects: [{ name: process.env.PODSCOPE_E2E_TARGET === 'electron' ? 'electron' : 'browser-mode', use: { browserName: 'chromium' } }],
});
