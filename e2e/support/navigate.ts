/**
 * Page loads that survive the host's network changing under Chromium. Chromium aborts a navigation with
 * net::ERR_NETWORK_CHANGED when an address appears or goes on any host interface while it loads — here, every bridge
 * and veth the real files and the other Playwright workers create beside this spec (npm test runs them side by side).
 * The app is not at fault and the page was never loaded, so the load is tried again, a few times; any other error,
 * and the last one, are the test's failure.
 */
import type { Page } from '@playwright/test';

const NETWORK_CHANGED = /net::ERR_NETWORK_CHANGED/;

async function again<T>(load: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await load();
    } catch (e) {
      if (attempt >= 5 || !NETWORK_CHANGED.test(String((e as Error).message))) throw e;
    }
  }
}

export const gotoApp = (page: Page, url: string) => again(() => page.goto(url));
export const reloadApp = (page: Page) => again(() => page.reload());
