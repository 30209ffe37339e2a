/**
 * Light, dark, or whatever the OS says ("system"), chosen in the app and remembered (localStorage). The effective
 * theme is written to <html data-theme>, which the design tokens in styles/theme.css key on.
 */
import { useEffect } from 'react';
import { createUiStore } from './ui-store';
import { persist } from 'zustand/middleware';

export type ThemeChoice = 'system' | 'light' | 'dark';

interface ThemeState {
  choice: ThemeChoice;
  setChoice(c: ThemeChoice): void;
}

export const useTheme = createUiStore<ThemeState>()(
  persist((set) => ({ choice: 'system', setChoice: (choice) => set({ choice }) }), { name: 'podscope.theme', version: 1 }),
);

const darkQuery = () => (typeof window.matchMedia === 'function' ? window.matchMedia('(prefers-color-scheme: dark)') : undefined);

export function effectiveTheme(choice: ThemeChoice): 'light' | 'dark' {
  if (choice !== 'system') return choice;
  return darkQuery()?.matches ? 'dark' : 'light';
}

export function applyTheme(choice: ThemeChoice): void {
  document.documentElement.dataset.theme = effectiveTheme(choice);
}

/** keeps <html data-theme> in step with the choice and, for "system", with the OS setting as it changes */
export function useApplyTheme(): void {
  const choice = useTheme((s) => s.choice);
  useEffect(() => {
    applyTheme(choice);
    if (choice !== 'system') return;
    const q = darkQuery();
    const onChange = () => applyTheme('system');
    q?.addEventListener('change', onChange);
    return () => q?.removeEventListener('change', onChange);
  }, [choice]);
}
