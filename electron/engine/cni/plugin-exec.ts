/**
 * One plugin exec through the ProcessRunner: find the binary, send the env and stdin, read the output, record the
 * call, and turn any failure into a CniError worded like libcni (`plugin type="bridge" failed (add): …`).
 * Every attempt is recorded, including ones that never started or whose output could not be read.
 */
import type { PodscopeError } from '../../../shared/domain/errors';
import type { PluginCall, CniVerb } from '../../../shared/domain/sandbox';
import type { ExecResult, ProcessRunner } from '../os/exec';
import type { CniCallRecord, CniHooks } from './types';
import { cniError } from './cni-error';
import { findPluginInPath } from './plugin-path';
import { pluginEnv } from './plugin-env';
import {
  defectCandidate,
  describeFailure,
  describeSpawnFailure,
  explainFailure,
  knownDefect,
  type FailureAdvice,
  type PluginFailure,
} from './plugin-failure';
import { pluginRelease } from './plugin-release';
import { NETFILTER_PLUGIN_TYPES, type NetfilterGate } from './netfilter-gate';

export interface ExecContext {
  runner: ProcessRunner;
  binDirs: string[];
  /** the engine's environment the CNI_* variables are laid over */
  baseEnv: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  record: (r: CniCallRecord) => void;
  /** bounds the execs of portmap and firewall across the engine (none: unbounded) */
  netfilterGate?: NetfilterGate;
}

/** What every caller of the CNI module (the runtime's manager, the lab) has; the hooks add a call's own. */
export interface ExecBase {
  runner: ProcessRunner;
  binDirs: string[];
  baseEnv: NodeJS.ProcessEnv;
  /** per-exec timeout when the hooks give none */
  defaultTimeoutMs: number;
  netfilterGate?: NetfilterGate;
}

export function execContextFor(base: ExecBase, hooks?: CniHooks): ExecContext {
  return {
    runner: base.runner,
    binDirs: base.binDirs,
    baseEnv: base.baseEnv,
    timeoutMs: hooks?.pluginTimeoutMs ?? base.defaultTimeoutMs,
    signal: hooks?.signal,
    record: hooks?.record ?? (() => {}),
    ...(base.netfilterGate ? { netfilterGate: base.netfilterGate } : {}),
  };
}

export interface PluginInvocation {
  network: string;
  /** the conflist file of the network, so an error can name it (undefined for the built-in loopback network) */
  source?: string;
  ifName: string;
  verb: CniVerb;
  /** index of the plugin in its list */
  index: number;
  type: string;
  /** `name` of the plugin object itself, which libcni adds to its error text (normally absent in a conflist) */
  pluginName?: string;
  stdin: string;
  cniEnv: Record<string, string>;
}

const VERB_WORD: Partial<Record<CniVerb, string>> = { ADD: 'add', DEL: 'delete', CHECK: 'check', STATUS: 'status', GC: 'gc' };

function emptyResult(): ExecResult {
  return { command: '', exitCode: null, signal: null, stdout: '', stderr: '', durationMs: 0, timedOut: false, canceled: false };
}

/** The words the plugin's error needs (docs/semantics.md#plugin-errors); the release is looked up only for a defect's text. */
async function adviseFailure(ctx: ExecContext, inv: PluginInvocation, f: PluginFailure, binary?: string): Promise<FailureAdvice> {
  let conf: Record<string, unknown> | undefined;
  try {
    conf = JSON.parse(inv.stdin) as Record<string, unknown>;
  } catch {
    conf = undefined;
  }
  const facts = { type: inv.type, verb: inv.verb, msg: f.msg, conf };
  const explanation = explainFailure(facts);
  const release = binary && defectCandidate(facts) ? await pluginRelease(ctx.runner, binary) : undefined;
  const defect = knownDefect(facts, release);
  return { ...(explanation ? { explanation } : {}), ...(defect ? { knownDefect: defect } : {}) };
}

function adviceText(f: PluginFailure, advice: FailureAdvice, type: string): string {
  if (advice.explanation) return `${advice.explanation} (the plugin said: ${f.text})`;
  const d = advice.knownDefect;
  if (d) return `${f.text} (a known defect of ${type} ${d.version}, ${d.reference}: ${d.explanation})`;
  return f.text;
}

function wrap(inv: PluginInvocation, f: PluginFailure, r: ExecResult, advice: FailureAdvice = {}): PodscopeError {
  const who = `type=${JSON.stringify(inv.type)}${inv.pluginName ? ` name=${JSON.stringify(inv.pluginName)}` : ''}`;
  return cniError(`plugin ${who} failed (${VERB_WORD[inv.verb] ?? inv.verb.toLowerCase()}): ${adviceText(f, advice, inv.type)}`, {
    network: inv.network,
    ...(inv.source ? { conflist: inv.source } : {}),
    ifName: inv.ifName,
    plugin: inv.type,
    verb: inv.verb,
    index: inv.index,
    cniCode: f.code,
    cniMsg: f.msg,
    cniDetails: f.details,
    ...(advice.explanation || advice.knownDefect ? { pluginError: f.text, ...advice } : {}),
    exitCode: r.exitCode,
    signal: r.signal,
    stderr: r.stderr,
    timedOut: r.timedOut,
    canceled: r.canceled,
  });
}

/**
 * Runs the plugin; on exit 0 hands stdout to `read` (which may throw on bad output) and returns what it returns.
 * Any failure is recorded and thrown as a CniError.
 */
export async function execPlugin<T>(ctx: ExecContext, inv: PluginInvocation, read: (stdout: string) => T): Promise<T> {
  let startedAt = new Date();
  let t0 = performance.now();
  let binary: string | undefined;
  let r = emptyResult();
  let failure: PluginFailure | undefined;
  let value: T | undefined;
  let waitedMs = 0;
  const plain = (e: unknown): PluginFailure => ({ msg: (e as Error).message, text: (e as Error).message });
  try {
    const file = await findPluginInPath(inv.type, ctx.binDirs);
    const exec = () => {
      // the call is timed from its start, after any wait for a netfilter slot (recorded apart)
      startedAt = new Date();
      t0 = performance.now();
      binary = file;
      return ctx.runner.run({
        file,
        input: inv.stdin,
        env: pluginEnv(ctx.baseEnv, inv.cniEnv),
        timeoutMs: ctx.timeoutMs,
        signal: ctx.signal,
      });
    };
    const gate = NETFILTER_PLUGIN_TYPES.has(inv.type) ? ctx.netfilterGate : undefined;
    if (gate) ({ value: r, waitedMs } = await gate.run(exec, ctx.signal));
    else r = await exec();
  } catch (e) {
    failure = binary ? describeSpawnFailure(binary, e) : plain(e);
  }
  if (!failure && r.exitCode !== 0) failure = describeFailure(r, ctx.timeoutMs);
  if (!failure) {
    try {
      value = read(r.stdout);
    } catch (e) {
      failure = plain(e);
    }
  }
  const error = failure && wrap(inv, failure, r, await adviseFailure(ctx, inv, failure, binary));
  const call: PluginCall = {
    network: inv.network,
    ifName: inv.ifName,
    type: inv.type,
    verb: inv.verb,
    index: inv.index,
    binary,
    env: inv.cniEnv,
    stdin: inv.stdin,
    stdout: r.stdout,
    stderr: r.stderr,
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
  };
  ctx.record({
    step: 'cni.plugin',
    label: `${inv.verb} ${inv.type} (${inv.network}${inv.ifName ? `/${inv.ifName}` : ''})`,
    startedAt: startedAt.toISOString(),
    durationMs: performance.now() - t0,
    ok: error === undefined,
    ...(error ? { error } : {}),
    plugin: call,
    ...(waitedMs >= 1 ? { detail: { netfilterWaitMs: Math.round(waitedMs) } } : {}),
  });
  if (error) throw error;
  return value as T;
}
