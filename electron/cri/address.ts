/**
 * The one place a CRI endpoint address is parsed, for the server's listen path and the client's dial target alike:
 * `unix:///abs/path` or `/abs/path` ⇒ the canonical `unix://` address and the normalised absolute socket path
 * (`//` and `.`/`..` segments folded), so two spellings of one socket compare equal.
 */
import { posix } from 'node:path';
import { PodscopeError } from '../../shared/domain/errors';

export interface UnixAddress {
  /** unix:///abs/path */
  address: string;
  /** /abs/path */
  socketPath: string;
}

/**
 * `baseDir` resolves a relative path against it (the server does this with its cwd for `--socket ./x.sock`); without
 * it a relative path is InvalidArgument (a client endpoint must name its socket absolutely).
 */
export function normalizeAddress(address: string, opts: { baseDir?: string } = {}): UnixAddress {
  let path = address.replace(/^unix:\/\//, '');
  if (!path.startsWith('/') && opts.baseDir !== undefined && path !== '') path = posix.resolve(opts.baseDir, path);
  if (!path.startsWith('/'))
    throw new PodscopeError('InvalidArgument', `CRI endpoint must be an absolute unix socket path, got "${address}"`);
  const socketPath = posix.normalize(path);
  if (socketPath === '/' || socketPath.endsWith('/'))
    throw new PodscopeError('InvalidArgument', `CRI endpoint must name a socket file, got "${address}"`);
  return { address: `unix://${socketPath}`, socketPath };
}
