/**
 * Test fixtures. `env` (worker scope) is one isolated engine + browser host for the whole run, torn down even when
 * specs fail. `app` is a page on it, in browser mode or (PODSCOPE_E2E_TARGET=electron) the Electron window.
 * After each test every sandbox is removed and every CRI endpoint added through the UI is dropped, so specs never
 * see each other's pods or endpoints. `containerd` (test scope, started only by the specs that ask for it) is a real
 * containerd with its own socket and network, stopped and cleaned even when the test fails.
 */
import { test as base, expect, type Page } from '@playwright/test';
import { createSandboxEnv, type SandboxEnv } from './sandbox-env';
import { electronAvailable, launchElectron } from './electron-app';
import { startContainerdEnv, type ContainerdEnv } from './containerd-env';
import { LOCAL_ENDPOINT_ID } from '../../shared/domain/endpoints';
import { AppPage } from '../pages/app-page';
import { gotoApp } from './navigate';
import { watchConsoleErrors } from './console-errors';

const target = process.env.PODSCOPE_E2E_TARGET === 'electron' ? 'electron' : 'browser';

export const test = base.extend<{ app: AppPage; containerd: ContainerdEnv }, { env: SandboxEnv }>({
  env: [
    async ({}, use) => {
      const env = await createSandboxEnv();
      try {
        await use(env);
      } finally {
        const problems = await env.dispose();
        if (problems.length) console.warn(`e2e teardown problems:\n${problems.join('\n')}`);
      }
    },
    { scope: 'worker', timeout: 120_000 },
  ],
  app: async ({ env, page }, use, testInfo) => {
    let p: Page = page;
    let close = async () => {};
    if (target === 'electron') {
      testInfo.skip(!electronAvailable(), 'no Electron binary or display on this machine');
      const launched = await launchElectron(env.options);
      p = launched.page;
      close = () => launched.app.close();
    } else {
      await gotoApp(p, env.host.url);
    }
    const pageErrors: string[] = [];
    p.on('pageerror', (e) => pageErrors.push(e.message));
    const consoleErrors = watchConsoleErrors(p);
    await use(new AppPage(p, testInfo));
    await close();
    for (const s of await env.engine.list()) {
      await env.engine.stop(s.id).catch(() => {});
      await env.engine.remove(s.id).catch(() => {});
    }
    for (const e of await env.endpoints.list()) if (e.id !== LOCAL_ENDPOINT_ID) await env.endpoints.remove(e.id).catch(() => {});
    expect(pageErrors, 'uncaught errors in the page').toEqual([]);
    expect(consoleErrors(testInfo), 'Content Security Policy refusals (other than style attributes) in the console').toEqual([]);
  },
  containerd: [
    async ({ env }, use) => {
      const ctd = await startContainerdEnv(env.endpoints);
      try {
        await use(ctd);
      } finally {
        const problems = await ctd.dispose();
        if (problems.length) console.warn(`containerd teardown problems:\n${problems.join('\n')}`);
      }
    },
    { timeout: 90_000 },
  ],
});

export { expect };
