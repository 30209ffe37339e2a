/**
 * A ProcessRunner that answers each exec from a script and records every call: the one fake of the process boundary
 * for tests of code that runs commands (runc, ip, iptables, a CNI plugin…). A script entry matches a command line
 * (its exact text, a regular expression over it, or a predicate over the request) and gives the result: exit code,
 * stdout, stderr, or a function of the request. The first entry that matches answers; an entry with `times` answers
 * that many calls and then steps aside. A call nothing matches gets `otherwise` (default: exit 0 with no output, or,
 * with `strict`, exit 127 saying no script matched, so a test notices a command it did not expect).
 */
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';

export type ScriptMatch = string | RegExp | ((req: ExecRequest, line: string) => boolean);
export type ScriptAnswer = Partial<ExecResult> | ((req: ExecRequest, line: string) => Partial<ExecResult> | Promise<Partial<ExecResult>>);

export interface ScriptEntry {
  match: ScriptMatch;
  answer: ScriptAnswer;
  /** answer this many calls, then let later entries answer (default: every call) */
  times?: number;
}

export interface ScriptedRunnerOptions {
  /** a call no entry matches: exit 127 with "no script for <line>" (default: exit 0, no output) */
  strict?: boolean;
}

/** `file arg1 arg2 …`: what a script matches and what `lines` records */
export const commandLine = (req: Pick<ExecRequest, 'file' | 'args'>) => [req.file, ...(req.args ?? [])].join(' ');

export class ScriptedRunner implements ProcessRunner {
  /** every request, in the order they ran */
  readonly calls: ExecRequest[] = [];
  private readonly entries: Array<ScriptEntry & { used: number }>;

  constructor(
    script: ScriptEntry[] | Record<string, Partial<ExecResult>> = [],
    private readonly options: ScriptedRunnerOptions = {},
  ) {
    const list = Array.isArray(script) ? script : Object.entries(script).map(([match, answer]) => ({ match, answer }));
    this.entries = list.map((e) => ({ ...e, used: 0 }));
  }

  /** adds an entry after the others */
  on(match: ScriptMatch, answer: ScriptAnswer, times?: number): this {
    this.entries.push({ match, answer, ...(times !== undefined && { times }), used: 0 });
    return this;
  }

  /** every call as its command line */
  get lines(): string[] {
    return this.calls.map(commandLine);
  }

  /** every call as [file, ...args] */
  get argvs(): string[][] {
    return this.calls.map((c) => [c.file, ...(c.args ?? [])]);
  }

  async run(req: ExecRequest): Promise<ExecResult> {
    this.calls.push(req);
    const line = commandLine(req);
    const entry = this.entries.find((e) => (e.times === undefined || e.used < e.times) && matches(e.match, req, line));
    let answer: Partial<ExecResult>;
    if (entry) {
      entry.used++;
      answer = typeof entry.answer === 'function' ? await entry.answer(req, line) : entry.answer;
    } else answer = this.options.strict ? { exitCode: 127, stderr: `no script for ${line}` } : {};
    return { command: line, exitCode: 0, signal: null, stdout: '', stderr: '', durationMs: 0, timedOut: false, canceled: false, ...answer };
  }
}

function matches(m: ScriptMatch, req: ExecRequest, line: string): boolean {
  if (typeof m === 'string') return m === line;
  if (m instanceof RegExp) return m.test(line);
  return m(req, line);
}
