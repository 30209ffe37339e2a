/**
 * The identifier rules of the CNI library (pkg/utils): container IDs and network names share one pattern, interface
 * names follow the kernel's rules. Each check returns a CNI error triple (code/msg/details) or undefined when valid.
 */
export interface CniErrorTriple {
  code: number;
  msg: string;
  details?: string;
}

export const CNI_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
const MAX_IFNAME_LENGTH = 15;

/** CNI error codes used by the runtime side (SPEC "Error codes"). */
export const CNI_CODE = { unknownContainer: 3, invalidEnvironment: 4, invalidNetworkConfig: 7 } as const;

export function validateContainerId(id: string): CniErrorTriple | undefined {
  if (id === '') return { code: CNI_CODE.unknownContainer, msg: 'missing containerID' };
  if (!CNI_NAME_PATTERN.test(id)) return { code: CNI_CODE.invalidEnvironment, msg: 'invalid characters in containerID', details: id };
  return undefined;
}

export function validateNetworkName(name: string): CniErrorTriple | undefined {
  if (name === '') return { code: CNI_CODE.invalidNetworkConfig, msg: 'missing network name:' };
  if (!CNI_NAME_PATTERN.test(name))
    return { code: CNI_CODE.invalidNetworkConfig, msg: 'invalid characters found in network name', details: name };
  return undefined;
}

export function validateIfName(ifName: string): CniErrorTriple | undefined {
  const invalid = (msg: string, details?: string): CniErrorTriple => ({ code: CNI_CODE.invalidEnvironment, msg, details });
  if (ifName.length === 0) return invalid('interface name is empty');
  if (ifName.length > MAX_IFNAME_LENGTH)
    return invalid('interface name is too long', `interface name should be less than ${MAX_IFNAME_LENGTH + 1} characters`);
  if (ifName === '.' || ifName === '..') return invalid('interface name is . or ..');
  if (/[/:\s]/u.test(ifName)) return invalid('interface name contains / or : or whitespace characters');
  return undefined;
}

/** The way the Go library prints its error type: msg, then "; details" when there are details. */
export function formatCniError(e: { msg: string; details?: string }): string {
  return e.details ? `${e.msg}; ${e.details}` : e.msg;
}
