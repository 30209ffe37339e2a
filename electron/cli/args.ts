/** Engine flags shared by every command that hosts an engine, and the --endpoint switch to a CRI runtime. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { PodscopeError } from '../../shared/domain/errors';
import { ENGINE_FLAGS_HELP, engineOptionsFromFlags, type Flags } from '../core/engine-flags';
import { ENGINE_FLAGS } from './command-line';

export type { Flags };
export { engineOptionsFromFlags, ENGINE_FLAGS_HELP, ENGINE_FLAGS };

export function parseCommandArgs(argv: string[], extra: ParseArgsConfig['options'] = {}): { flags: Flags; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { ...ENGINE_FLAGS, ...extra }, allowPositionals: true, strict: true });
    return { flags: values as Flags, positionals };
  } catch (e) {
    throw new PodscopeError('InvalidArgument', (e as Error).message);
  }
}
