import type { SetField } from '../api/use-create-form';
import type { FieldErrors, FormState } from '../model/form-state';

/** what each section of the create form gets: the fields, how to change one, the errors that may show yet */
export interface SectionProps {
  form: FormState;
  set: SetField;
  errors: FieldErrors;
  locked: boolean;
}
