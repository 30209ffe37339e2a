import { randomBytes } from 'node:crypto';
import type { PodSandboxMetadata } from '../../../shared/domain/config';

/** 32 random bytes as 64 lower-case hex characters, the shape containerd and CRI-O use. */
export function generateSandboxId(): string {
  return randomBytes(32).toString('hex');
}

/** containerd's makeSandboxName: name_namespace_uid_attempt (empty parts allowed, attempt in decimal). */
export function makeSandboxName(m: PodSandboxMetadata): string {
  return [m.name, m.namespace, m.uid, String(m.attempt)].join('_');
}
