/** Engine flags shared by every command that hosts an engine, and the --endpoint switch to a CRI runtime. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { PodscopeError } from '../../shared/domain/errors';
import { ENGINE_FLAGS_HELP, engineOptionsFromFlags, type Flags } from '../core/engine-flags';
import { ENGINE_FLAGS } from './command-line';

export type { Flags };
export { engineOptionsFromFlags, ENGINE_FLAGS_HELP, ENGINE_FLAGS };

/**
 * @param opts.manyEndpoints the verb works across nodes: `--endpoint` given more than once lands in `flags.endpoints`
 * (and `flags.endpoint` stays unset); elsewhere a second `--endpoint` is refused. One `--endpoint` is always
 * `flags.endpoint`, a string, as every verb reads it.
 */
export function parseCommandArgs(
  argv: string[],
  extra: ParseArgsConfig['options'] = {},
  opts: { manyEndpoints?: boolean } = {},
): { flags: Flags; positionals: string[] } {
  let parsed: { values: Flags; positionals: string[] };
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { ...ENGINE_FLAGS, ...extra }, allowPositionals: true, strict: true });
    parsed = { values: values as Flags, positionals };
  } catch (e) {
    throw new PodscopeError('InvalidArgument', (e as Error).message);
  }
  const flags = parsed.values;
  const endpoints = flags.endpoint as string[] | undefined;
  delete flags.endpoint;
  if (endpoints?.length === 1) flags.endpoint = endpoints[0];
  else if (endpoints && endpoints.length > 1) {
    if (!opts.manyEndpoints)
      throw new PodscopeError('InvalidArgument', '--endpoint is taken once by this command (pods, inspectp and probe take several)');
    flags.endpoints = endpoints;
  }
  return { flags, positionals: parsed.positionals };
}
