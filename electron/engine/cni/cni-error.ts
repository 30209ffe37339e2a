/** Every failure of the CNI layer surfaces as one PodscopeError with code CniError; details carry the structured facts. */
import { PodscopeError } from '../../../shared/domain/errors';

export function cniError(message: string, details?: Record<string, unknown>, cause?: unknown): PodscopeError {
  return new PodscopeError('CniError', message, { details, cause });
}

/** go-cni's ready() answer; containerd shows it as "Network plugin returns error: cni plugin not initialized". */
export const NOT_INITIALIZED = 'cni plugin not initialized';

/**
 * libcni's plugin errors name the plugin but not the file its network came from; with several conflists (or a
 * stale one) the user needs both. " (network "n", file /etc/cni/net.d/10-x.conflist)" when the details carry them.
 */
export function conflistSuffix(e: unknown): string {
  const d = e instanceof PodscopeError && typeof e.details === 'object' && e.details !== null ? (e.details as Record<string, unknown>) : {};
  if (typeof d.conflist !== 'string' || typeof d.plugin !== 'string') return '';
  return ` (network ${JSON.stringify(d.network)}, file ${d.conflist})`;
}
