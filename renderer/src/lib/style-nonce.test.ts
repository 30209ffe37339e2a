// @vitest-environment jsdom
/**
 * The style nonce: the server puts a fresh one in the CSP's style-src and in the page; <style> elements a library
 * creates inside withStyleNonce carry it, others do not; a page served without the substitution gives none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cspWithStyleNonce, fillStyleNonce, STYLE_NONCE_META, STYLE_NONCE_PLACEHOLDER } from '../../../shared/ipc/style-nonce';
import { pageStyleNonce, withStyleNonce } from './style-nonce';

const setMeta = (content: string) => {
  const m = document.createElement('meta');
  m.name = STYLE_NONCE_META;
  m.content = content;
  document.head.appendChild(m);
};

afterEach(() => document.head.querySelectorAll('meta').forEach((m) => m.remove()));

describe('style nonce', () => {
  it('adds the nonce to style-src only, and fills the page', () => {
    expect(cspWithStyleNonce("default-src 'none'; style-src 'self'; img-src 'self'", 'abc')).toBe(
      "default-src 'none'; style-src 'self' 'nonce-abc'; img-src 'self'",
    );
    expect(fillStyleNonce(`<meta content="${STYLE_NONCE_PLACEHOLDER}">${STYLE_NONCE_PLACEHOLDER}`, 'xyz')).toBe('<meta content="xyz">xyz');
  });

  it('gives <style> elements made inside withStyleNonce the page nonce, and nothing after', () => {
    setMeta('n0nce');
    const inside = withStyleNonce(document, () => [document.createElement('style'), document.createElement('div')]);
    expect(inside[0]!.getAttribute('nonce')).toBe('n0nce');
    expect(inside[1]!.hasAttribute('nonce')).toBe(false);
    expect(document.createElement('style').hasAttribute('nonce')).toBe(false);
    expect(Object.prototype.hasOwnProperty.call(document, 'createElement')).toBe(false);
  });

  it('has no nonce when the page was served without the substitution', () => {
    setMeta(STYLE_NONCE_PLACEHOLDER);
    expect(pageStyleNonce()).toBeUndefined();
    expect(withStyleNonce(document, () => document.createElement('style')).hasAttribute('nonce')).toBe(false);
  });
});
