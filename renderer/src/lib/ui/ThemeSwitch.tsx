import { useTheme, type ThemeChoice } from '../theme';

const CHOICES: Array<[ThemeChoice, string]> = [
  ['system', 'System'],
  ['light', 'Light'],
  ['dark', 'Dark'],
];

/** a three-way segmented switch; the choice persists across reloads */
export function ThemeSwitch() {
  const choice = useTheme((s) => s.choice);
  const setChoice = useTheme((s) => s.setChoice);
  return (
    <div className="theme-switch" role="radiogroup" aria-label="Theme">
      {CHOICES.map(([value, label]) => (
        <button
          key={value}
          type="button"
          role="radio"
          aria-checked={choice === value}
          className={choice === value ? 'theme-opt theme-on' : 'theme-opt'}
          onClick={() => setChoice(value)}
        >
          {label}
        </button>
      ))}
    </div>
  );
}
