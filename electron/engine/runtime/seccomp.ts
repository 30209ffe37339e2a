/**
 * Seccomp for the pause container and every app container, chosen the way containerd does
 * (internal/cri/sputil GenerateSeccompSecurityProfile / GenerateSeccompSpecOpts, docs/semantics.md#seccomp):
 *
 * - the CRI `seccomp` SecurityProfile wins; a present but empty one is RuntimeDefault (enum 0);
 * - else the deprecated `seccomp_profile_path`: "" ⇒ none, "unconfined" ⇒ none, "runtime/default" and
 *   "docker/default" ⇒ the built-in profile, "localhost/<path>" ⇒ that file;
 * - privileged ⇒ never any seccomp.
 *
 * RuntimeDefault is Podscope's own allowlist (seccomp-default.json: default action ERRNO(EPERM), rules that apply
 * only with or without some capabilities). Localhost profiles are OCI `linux.seccomp` JSON files; a relative ref is
 * resolved under the engine's seccomp profile root and may not leave it.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import type { SecurityProfile } from '../../../shared/domain/config';
import { PodscopeError, invalidArgument } from '../../../shared/domain/errors';
import defaultProfile from './seccomp-default.json' with { type: 'json' };

export interface OciSeccompArg {
  index: number;
  value: number;
  valueTwo?: number;
  op: string;
}

export interface OciSeccompRule {
  names: string[];
  action: string;
  errnoRet?: number;
  args?: OciSeccompArg[];
}

export interface OciSeccomp {
  defaultAction: string;
  defaultErrnoRet?: number;
  architectures?: string[];
  syscalls?: OciSeccompRule[];
}

export interface SeccompChoice {
  /** "unconfined", "runtime/default" or "localhost/<absolute path>" (what the status shows) */
  applied: string;
  spec?: OciSeccomp;
}

interface ProfileRule extends OciSeccompRule {
  comment?: string;
  includes?: { caps?: string[] };
  excludes?: { caps?: string[] };
}

const UNCONFINED: SeccompChoice = { applied: 'unconfined' };

/** The built-in profile specialised for a capability set and this machine's architecture. */
export function runtimeDefaultSeccomp(capabilities: readonly string[], arch: string = process.arch): OciSeccomp {
  const caps = new Set(capabilities);
  const rules = (defaultProfile.syscalls as ProfileRule[])
    .filter((r) => (r.includes?.caps ?? []).every((c) => caps.has(c)))
    .filter((r) => !(r.excludes?.caps ?? []).some((c) => caps.has(c)))
    .map(({ names, action, errnoRet, args }) => ({
      names: [...names],
      action,
      ...(errnoRet !== undefined && { errnoRet }),
      ...(args && { args: args.map((a) => ({ ...a })) }),
    }));
  const archMap = defaultProfile.archMap as Record<string, string[]>;
  return {
    defaultAction: defaultProfile.defaultAction,
    defaultErrnoRet: defaultProfile.defaultErrnoRet,
    ...(archMap[arch] && { architectures: [...archMap[arch]] }),
    syscalls: rules,
  };
}

/** The profile the CRI fields ask for, before any file is read. */
export function seccompRequest(
  profile: SecurityProfile | undefined,
  legacyPath: string,
): { kind: 'unconfined' } | { kind: 'default' } | { kind: 'localhost'; ref: string } {
  if (profile) {
    if (profile.profile_type === 1) return { kind: 'unconfined' };
    if (profile.profile_type === 2) {
      if (!profile.localhost_ref) throw invalidArgument('seccomp: a Localhost profile needs localhost_ref');
      return { kind: 'localhost', ref: profile.localhost_ref };
    }
    return { kind: 'default' };
  }
  if (legacyPath === '' || legacyPath === 'unconfined') return { kind: 'unconfined' };
  if (legacyPath === 'runtime/default' || legacyPath === 'docker/default') return { kind: 'default' };
  if (legacyPath.startsWith('localhost/')) return { kind: 'localhost', ref: legacyPath.slice('localhost/'.length) };
  throw invalidArgument(
    `seccomp_profile_path ${JSON.stringify(legacyPath)}: expected "", "unconfined", "runtime/default", "docker/default" or "localhost/<path>"`,
  );
}

/** Resolves a localhost ref: absolute paths as given (kubelet sends them), relative ones under `root` only. */
export function localhostProfilePath(ref: string, root: string): string {
  if (isAbsolute(ref)) return ref;
  const path = resolve(root, ref);
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
    throw invalidArgument(`seccomp localhost profile ${JSON.stringify(ref)} leaves the profile root ${root}`);
  return path;
}

function checkProfile(path: string, value: unknown): OciSeccomp {
  const p = value as OciSeccomp;
  if (!p || typeof p !== 'object' || typeof p.defaultAction !== 'string' || !p.defaultAction.startsWith('SCMP_ACT_')) {
    throw invalidArgument(`seccomp profile ${path}: not an OCI seccomp profile (defaultAction must be an SCMP_ACT_* string)`);
  }
  if (p.syscalls !== undefined && !Array.isArray(p.syscalls)) throw invalidArgument(`seccomp profile ${path}: syscalls must be an array`);
  return {
    defaultAction: p.defaultAction,
    ...(p.defaultErrnoRet !== undefined && { defaultErrnoRet: p.defaultErrnoRet }),
    ...(p.architectures && { architectures: p.architectures }),
    ...(p.syscalls && { syscalls: p.syscalls }),
  };
}

export interface SeccompInput {
  profile: SecurityProfile | undefined;
  legacyPath: string;
  privileged: boolean;
  /** the process's capabilities (bounding set), which pick the capability-dependent rules */
  capabilities: readonly string[];
  /** where relative localhost refs live (EngineOptions.seccompProfileRoot) */
  profileRoot: string;
}

/** Validation only (no file read): throws InvalidArgument for what can never apply. */
export function checkSeccompRequest(input: Pick<SeccompInput, 'profile' | 'legacyPath' | 'profileRoot'>): void {
  const req = seccompRequest(input.profile, input.legacyPath);
  if (req.kind === 'localhost') localhostProfilePath(req.ref, input.profileRoot);
}

export async function loadSeccomp(input: SeccompInput): Promise<SeccompChoice> {
  const req = seccompRequest(input.profile, input.legacyPath);
  // a privileged process runs without seccomp whatever was asked (containerd: GenerateSeccompSpecOpts)
  if (input.privileged || req.kind === 'unconfined') return UNCONFINED;
  if (req.kind === 'default') return { applied: 'runtime/default', spec: runtimeDefaultSeccomp(input.capabilities) };
  const path = localhostProfilePath(req.ref, input.profileRoot);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new PodscopeError(
      'InvalidArgument',
      `cannot load seccomp profile ${JSON.stringify(path)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw invalidArgument(`seccomp profile ${path}: not JSON: ${(e as Error).message}`);
  }
  return { applied: `localhost/${path}`, spec: checkProfile(path, parsed) };
}
