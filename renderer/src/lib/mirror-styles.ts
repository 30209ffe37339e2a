/**
 * The app's Content-Security-Policy allows stylesheets from 'self' only, so a <style> element a library injects at
 * run time is not applied. xterm.js's DOM renderer keeps its theme colours and cell metrics in such elements and
 * rewrites them as the terminal resizes. This copies their text into a constructed stylesheet (the CSSOM, which the
 * policy does not govern) and keeps it in sync, so the policy stays strict and the terminal still gets its styles.
 */
export function mirrorInjectedStyles(root: HTMLElement): () => void {
  const doc = root.ownerDocument;
  if (typeof CSSStyleSheet === 'undefined' || !('adoptedStyleSheets' in doc) || !('replaceSync' in CSSStyleSheet.prototype))
    return () => {};
  const sheet = new CSSStyleSheet();
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
  let last = '';
  const sync = () => {
    const text = [...root.querySelectorAll('style')].map((s) => s.textContent ?? '').join('\n');
    if (text === last) return;
    last = text;
    try {
      sheet.replaceSync(text);
    } catch {
      // a rule this browser cannot parse: keep the previous rules
    }
  };
  const observer = new MutationObserver(sync);
  observer.observe(root, { subtree: true, childList: true, characterData: true });
  sync();
  return () => {
    observer.disconnect();
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
  };
}
