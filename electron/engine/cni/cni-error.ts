/** Every failure of the CNI layer surfaces as one PodscopeError with code CniError; details carry the structured facts. */
import { PodscopeError } from '../../../shared/domain/errors';

export function cniError(message: string, details?: Record<string, unknown>, cause?: unknown): PodscopeError {
  return new PodscopeError('CniError', message, { details, cause });
}

/** go-cni's ready() answer; containerd shows it as "Network plugin returns error: cni plugin not initialized". */
export const NOT_INITIALIZED = 'cni plugin not initialized';
