import { describe, expect, it } from 'vitest';
import { decideRootPolicy } from './root-policy';

describe('root policy for the Electron shell', () => {
  it('runs normally for a regular user', () => {
    expect(decideRootPolicy(1000, [])).toEqual({ action: 'normal' });
  });
  it('refuses root without --allow-root and points at browser mode', () => {
    const d = decideRootPolicy(0, ['electron', 'main.js']);
    expect(d.action).toBe('refuse');
    expect(d.action === 'refuse' && d.message).toContain('podscope serve');
  });
  it('disables the Chromium sandbox only when explicitly allowed, with a warning', () => {
    expect(decideRootPolicy(0, ['--allow-root'])).toMatchObject({
      action: 'no-sandbox',
      warning: expect.stringContaining('sandbox disabled'),
    });
  });
});
