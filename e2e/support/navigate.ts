/**
 * Page loads that survive the host's network changing under Chromium. Chromium aborts requests in flight with
 * net::ERR_NETWORK_CHANGED when an address appears or goes on any host interface — here, every bridge and veth the
 * real files and the other Playwright workers create beside this spec (npm test runs them side by side). It hits the
 * navigation itself (page.goto throws) or only a subresource: then the load "succeeds" without the stylesheet or a
 * script chunk, and the test goes on clicking an unstyled page where elements overlap (a CI run lost its CSS this
 * way and clicked the empty-detail text instead of a pod row), or the document's own request, and Chromium navigates
 * to its error page (page.goto says the navigation was interrupted by chrome-error://) or starts the same navigation again
 * itself (interrupted by another navigation to the same URL). The app is not at fault and the page was never fully
 * loaded, so either way the load is tried again, a few times; any other error, and the last one, are the test's.
 */
import type { Page, Request, Response } from '@playwright/test';

const NETWORK_CHANGED = /net::ERR_NETWORK_CHANGED/;
/** how page.goto fails when the document's own request was the one lost: Chromium shows its error page instead */
const TO_ERROR_PAGE = /interrupted by another navigation to "chrome-error:\/\/chromewebdata\//;
const ATTEMPTS = 5;

/**
 * How page.goto fails when Chromium itself started the navigation again (it retries a document request the network
 * change aborted): the first one is "interrupted by another navigation" to the same URL (runs 35 and 36), both named
 * as Chromium normalised them
 */
const RESTARTED = /Navigation to "([^"]+)" is interrupted by another navigation to "\1"/;

/** by page: the resources a load lost to a network change and that a later attempt of that load then fetched */
const redone = new WeakMap<Page, Set<string>>();

/**
 * Whether a console error is Chromium's "Failed to load resource: net::ERR_NETWORK_CHANGED" for a resource of a page
 * load that was tried again here and then loaded whole: a spec that allows no console error (the glance tour) leaves
 * those out, since the page the user would see is the one loaded again. A loss outside such a load still counts.
 */
export function lostAndRedone(page: Page, text: string, url: string): boolean {
  return NETWORK_CHANGED.test(text) && (redone.get(page)?.has(url) ?? false);
}

async function again(page: Page, load: () => Promise<Response | null>): Promise<Response | null> {
  const lostEarlier: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const lost: string[] = [];
    const onFailed = (r: Request) => {
      if (NETWORK_CHANGED.test(r.failure()?.errorText ?? '')) lost.push(r.url());
    };
    page.on('requestfailed', onFailed);
    try {
      const response = await load();
      if (lost.length === 0) {
        const set = redone.get(page) ?? new Set<string>();
        for (const u of lostEarlier) set.add(u);
        redone.set(page, set);
        return response;
      }
      lostEarlier.push(...lost);
      if (attempt >= ATTEMPTS) throw new Error(`the page loaded without ${lost.join(', ')}: net::ERR_NETWORK_CHANGED ${ATTEMPTS} times`);
    } catch (e) {
      const message = String((e as Error).message);
      // Playwright gives no request event for a document lost this way (two CI runs showed none), so the error page
      // counts as such a loss; an app that does not answer fails every attempt, and the last failure is the test's
      const lostToNetworkChange = NETWORK_CHANGED.test(message) || TO_ERROR_PAGE.test(message) || RESTARTED.test(message);
      if (!lostToNetworkChange) throw e;
      if (attempt >= ATTEMPTS) throw new Error(`${ATTEMPTS} loads lost to the host's network changing, the last: ${message}`, { cause: e });
      // a navigation Chromium restarted itself is still under way: a new goto now would interrupt it in turn (a CI run
      // failed this way in under a second), so the next attempt waits for it to end first, however it ends
      if (RESTARTED.test(message)) await page.waitForLoadState('load', { timeout: 15_000 }).catch(() => undefined);
    } finally {
      page.off('requestfailed', onFailed);
    }
  }
}

export const gotoApp = (page: Page, url: string) => again(page, () => page.goto(url));
export const reloadApp = (page: Page) => again(page, () => page.reload());
