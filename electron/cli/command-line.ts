/**
 * The command line before a verb runs: which flags every verb shares, and where flags written before the verb go.
 * Light on purpose (no engine, no zod): the CLI's entry reads it for every verb.
 */
import type { ParseArgsConfig } from 'node:util';
import { ENGINE_OPTION_FLAGS } from '../core/engine-flag-table';

/** Engine flags shared by every command that hosts an engine, and the --endpoint switch to a CRI runtime. */
export const ENGINE_FLAGS = {
  ...ENGINE_OPTION_FLAGS,
  // repeatable for the verbs that work across nodes (pods, inspectp); parseCommandArgs refuses a second one elsewhere
  endpoint: { type: 'string', multiple: true },
  'endpoint-cni-cache': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const FLAG_TYPES: Record<string, 'string' | 'boolean'> = Object.fromEntries(
  Object.entries(ENGINE_FLAGS).map(([name, o]) => [name, o.type]),
);

/**
 * `podscope --state-dir X images load FILE` ⇒ `images load --state-dir X FILE`: flags written before the command are
 * handed to it, as crictl allows, after the command's subcommand when it has one (`images load`, `lab run`), since
 * a command reads its subcommand as its first word. A known flag takes a value by its type; an unknown one takes the
 * next word unless that word is a flag or a command. `--help` before the command stays where it is (the usage).
 * @param subcommandsOf the subcommands of a command (none for most)
 */
export function commandFirst(
  argv: string[],
  isCommand: (word: string) => boolean,
  subcommandsOf: (command: string) => readonly string[],
): string[] {
  const leading: string[] = [];
  let i = 0;
  while (i < argv.length && argv[i]!.startsWith('--') && argv[i] !== '--help' && argv[i] !== '--') {
    const flag = argv[i]!;
    const type = FLAG_TYPES[flag.slice(2)];
    const next = argv[i + 1];
    const takesValue =
      !flag.includes('=') && next !== undefined && (type === 'string' || (type === undefined && !next.startsWith('-') && !isCommand(next)));
    leading.push(...argv.slice(i, i + (takesValue ? 2 : 1)));
    i += takesValue ? 2 : 1;
  }
  if (leading.length === 0 || i >= argv.length) return argv;
  const command = argv[i]!;
  const sub = argv[i + 1] !== undefined && subcommandsOf(command).includes(argv[i + 1]!) ? 1 : 0;
  return [...argv.slice(i, i + 1 + sub), ...leading, ...argv.slice(i + 1 + sub)];
}
