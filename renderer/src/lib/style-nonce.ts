/**
 * The page's style nonce (shared/ipc/style-nonce.ts), for <style> elements a library creates while `fn` runs: the
 * document's createElement is wrapped for that call only, so xterm.js's own style elements carry the nonce and the
 * CSP applies them without `unsafe-inline` and without a violation. Outside `fn` nothing gets the nonce.
 */
import { STYLE_NONCE_META, STYLE_NONCE_PLACEHOLDER } from '../../../shared/ipc/style-nonce';

export function pageStyleNonce(doc: Document = document): string | undefined {
  const n = doc.querySelector<HTMLMetaElement>(`meta[name="${STYLE_NONCE_META}"]`)?.content;
  return n && n !== STYLE_NONCE_PLACEHOLDER ? n : undefined;
}

export function withStyleNonce<T>(doc: Document, fn: () => T): T {
  const nonce = pageStyleNonce(doc);
  if (!nonce) return fn();
  const own = Object.prototype.hasOwnProperty.call(doc, 'createElement');
  const original = doc.createElement as (this: Document, tag: string, options?: ElementCreationOptions) => HTMLElement;
  doc.createElement = function (this: Document, tag: string, options?: ElementCreationOptions) {
    const el = original.call(this, tag, options);
    if (tag.toLowerCase() === 'style') el.setAttribute('nonce', nonce);
    return el;
  } as Document['createElement'];
  try {
    return fn();
  } finally {
    if (own) doc.createElement = original as Document['createElement'];
    else delete (doc as { createElement?: unknown }).createElement;
  }
}
