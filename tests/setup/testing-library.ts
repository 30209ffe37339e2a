// findBy*/waitFor wait for what the real engine (over fakes) does; on a loaded 2-core machine that can take more than
// testing-library's default second, and a test must not fail for the machine's speed.
import { configure, getConfig, prettyDOM } from '@testing-library/dom';
import { beforeAll } from 'vitest';
import { resetUiStores } from '../../renderer/src/lib/ui-store';

/**
 * testing-library's own error (same name, same message: the query's text and the DOM as prettyDOM prints it), with
 * the DOM printed only when the message is read. findBy* and waitFor call a failing query again on every DOM mutation
 * and every 50 ms until it passes, and each failure printed the whole DOM (pretty-format, ~23 ms for the create form)
 * into an error the next attempt threw away: about a fourteenth of the component files' CPU. The DOM is kept as its
 * HTML when the query fails (under 1 ms; a deep clone in jsdom costs nearly as much as printing), so the message shows
 * the DOM as it was then, not as it is when the error is reported.
 */
class TestingLibraryElementError extends Error {
  #print: (() => string) | undefined;
  constructor(text: string | null, container: Element | Document) {
    super();
    this.name = 'TestingLibraryElementError';
    const ignored = getConfig().defaultIgnore;
    const snapshot = snapshotOf(container);
    this.#print = () => [text, `Ignored nodes: comments, ${ignored}\n${prettyDOM(snapshot())}`].filter(Boolean).join('\n\n');
  }
  /** Error's `message` is a data property: this getter turns into one on its first read */
  override get message(): string {
    const value = this.#print?.() ?? '';
    this.#print = undefined;
    Object.defineProperty(this, 'message', { value, writable: true, configurable: true });
    return value;
  }
}

/** The container's HTML now, and a function that parses it back into a node prettyDOM prints the same way. */
function snapshotOf(container: Element | Document): () => Element | Document {
  const el = 'documentElement' in container ? container.documentElement : container;
  const html = el.outerHTML;
  const tag = el.localName;
  return () => {
    if (tag === 'html' || tag === 'head' || tag === 'body') {
      const doc = new DOMParser().parseFromString(html, 'text/html');
      return tag === 'html' ? doc : tag === 'head' ? doc.head : doc.body;
    }
    const template = document.createElement('template');
    template.innerHTML = html;
    return template.content.firstElementChild ?? el;
  };
}

configure({
  asyncUtilTimeout: 10_000,
  getElementError: (message, container) => new TestingLibraryElementError(message, container),
});

// The component files share one module graph per worker (vitest.config.ts, project "ui"): each file starts from the
// UI stores' initial state, as it would with a graph of its own.
beforeAll(() => resetUiStores());
