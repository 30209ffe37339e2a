/**
 * Every console error of every page the specs drive, counted over the whole run. Chromium also logs what a page
 * did not ask for in words (a refused inline style under the CSP, a failed load) as console errors, which
 * `pageerror` (uncaught exceptions only) never sees. Each test appends its errors to one file of the run; the global
 * teardown prints the count by message. A refused <style> element, script or other resource fails the test that met
 * it: the policy stays strict (style-src 'self' with the page's nonce), so such a refusal is a part of the UI that
 * does not render as written. Refused style *attributes* are counted, not failed: Chromium's own editing writes them
 * when Playwright's fill() replaces several lines of the lab's editor at once (a native insertion over a selection
 * made in the DOM, which CodeMirror leaves to the browser and then redraws, so nothing shows).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsoleMessage, Page, TestInfo } from '@playwright/test';

/** one file per run: the workers append, the global setup empties it, the global teardown reads it */
export const CONSOLE_ERRORS_FILE = fileURLToPath(new URL('../artifacts/console-errors.jsonl', import.meta.url));

interface Entry {
  test: string;
  text: string;
  url: string;
}

/** starts collecting a page's console errors; call the result after the test to record them */
export function watchConsoleErrors(page: Page): (testInfo: TestInfo) => string[] {
  const entries: Omit<Entry, 'test'>[] = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error') entries.push({ text: m.text(), url: m.location().url });
  });
  return (testInfo) => {
    const test = testInfo.titlePath.slice(1).join(' › ');
    if (entries.length) mkdirSync(dirname(CONSOLE_ERRORS_FILE), { recursive: true });
    for (const e of entries) appendFileSync(CONSOLE_ERRORS_FILE, `${JSON.stringify({ test, ...e })}\n`);
    return entries.filter((e) => isCspRefusal(e.text)).map((e) => `${e.text} @ ${e.url}`);
  };
}

/** a CSP refusal other than of a style attribute ("Applying inline style violates …", see above) */
export function isCspRefusal(text: string): boolean {
  return /Content Security Policy/i.test(text) && !/^Applying inline style violates/.test(text);
}

export function resetConsoleErrors(): void {
  rmSync(CONSOLE_ERRORS_FILE, { force: true });
}

/** "console errors over the run: N", then each distinct message (numbers and ids folded) with its count and a test */
export function consoleErrorSummary(): string {
  const entries: Entry[] = existsSync(CONSOLE_ERRORS_FILE)
    ? readFileSync(CONSOLE_ERRORS_FILE, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Entry)
    : [];
  const byText = new Map<string, { n: number; test: string }>();
  for (const e of entries) {
    const key = e.text
      .replace(/'nonce-[^']*'/g, "'nonce-…'")
      .replace(/'sha256-[^']*'/g, "'sha256-…'")
      .replace(/\b[0-9a-f]{12,64}\b/g, '<id>')
      .replace(/\d+/g, 'N');
    const seen = byText.get(key);
    if (seen) seen.n++;
    else byText.set(key, { n: 1, test: e.test });
  }
  const lines = [`console errors over the run: ${entries.length} (in ${new Set(entries.map((e) => e.test)).size} tests)`];
  for (const [text, { n, test }] of [...byText].sort((a, b) => b[1].n - a[1].n))
    lines.push(`  ${n} × ${text.slice(0, 200)}  (first in: ${test})`);
  return lines.join('\n');
}
