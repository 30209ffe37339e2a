/** In-memory NetnsManager for unit tests: records calls, can fail on demand, never touches the host. */
import { join } from 'node:path';
import { newNetnsName } from '../../electron/engine/netns/linux-netns';
import type { NetnsManager } from '../../electron/engine/netns/types';

export class FakeNetnsManager implements NetnsManager {
  readonly pinned = new Set<string>();
  readonly calls: { op: 'create' | 'remove' | 'isClosed' | 'list'; path?: string }[] = [];
  /** the next create() throws this (once) */
  createError: Error | undefined;
  /** the next remove() throws this (once) */
  removeError: Error | undefined;

  constructor(readonly dir = '/var/run/netns') {}

  newPath(): string {
    return join(this.dir, newNetnsName());
  }

  async create(signal?: AbortSignal, path = this.newPath()): Promise<string> {
    this.calls.push({ op: 'create' });
    signal?.throwIfAborted();
    const error = this.createError;
    this.createError = undefined;
    if (error) throw error;
    this.pinned.add(path);
    return path;
  }

  async remove(path: string): Promise<void> {
    this.calls.push({ op: 'remove', path });
    const error = this.removeError;
    this.removeError = undefined;
    if (error) throw error;
    this.pinned.delete(path);
  }

  async isClosed(path: string): Promise<boolean> {
    this.calls.push({ op: 'isClosed', path });
    return !this.pinned.has(path);
  }

  async list(): Promise<string[]> {
    this.calls.push({ op: 'list' });
    return [...this.pinned];
  }

  /** Simulates the namespace disappearing behind the engine's back (e.g. someone ran `ip netns del`). */
  vanish(path: string): void {
    this.pinned.delete(path);
  }
}
