import { randomBytes } from 'node:crypto';

/** 32 random bytes as 64 lower-case hex characters, as containerd's util.GenerateID. */
export function generateContainerId(): string {
  return randomBytes(32).toString('hex');
}
