/**
 * The user's "reduce motion" setting (prefers-reduced-motion): scrolls jump instead of gliding. CSS honours it in
 * styles/components.css (the spinner stands still); browsers do not apply it to scrollIntoView by themselves.
 */
export const scrollBehavior = (): ScrollBehavior => (window.matchMedia?.('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth');
