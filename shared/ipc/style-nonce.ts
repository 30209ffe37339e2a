/**
 * The renderer's CSP allows no inline style, yet xterm.js keeps its cell metrics and theme in <style> elements it
 * creates at run time. Each response of index.html gets a fresh nonce: the server writes it into the CSP header's
 * style-src and in place of this placeholder in the page (the meta CSP and the meta the renderer reads it from), and
 * the renderer gives it to those <style> elements only (lib/style-nonce.ts). A page served without the substitution
 * has the placeholder, whose braces make it no valid nonce source: nothing inline is allowed there.
 */
export const STYLE_NONCE_PLACEHOLDER = '{{PODSCOPE_STYLE_NONCE}}';
export const STYLE_NONCE_META = 'podscope-style-nonce';

/** style-src 'self' → style-src 'self' 'nonce-…' (the rest of the policy unchanged) */
export function cspWithStyleNonce(csp: string, nonce: string): string {
  return csp.replace(/(^|;\s*)style-src ([^;]*)/, (_m, pre: string, v: string) => `${pre}style-src ${v} 'nonce-${nonce}'`);
}

export function fillStyleNonce(html: string, nonce: string): string {
  return html.split(STYLE_NONCE_PLACEHOLDER).join(nonce);
}

/** base64 of 16 random bytes is what a nonce should be; only [A-Za-z0-9+/=] may reach the header */
export const validNonce = (n: string): boolean => /^[A-Za-z0-9+/]{22,}={0,2}$/.test(n);
