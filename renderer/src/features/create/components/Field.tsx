/** The labelled input lives in lib/ui (the container form uses it too); re-exported for the create form's imports. */
export { Field } from '../../../lib/ui/Field';
