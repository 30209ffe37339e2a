/** The labelled input lives in lib/ui (the container form uses it too); re-exported for the create form's imports. */
export { Field } from '../../../lib/ui/Field';

/** a one-line monospace input taking the Field's id and aria props */
export function TextInput({
  p,
  value,
  onChange,
  placeholder,
}: {
  p: object;
  value: string;
  onChange: (v: string) => void;
  placeholder?: string;
}) {
  return <input {...p} className="input mono" value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />;
}
