/**
 * The check an endpoint path passes before anything dials it: the path itself (lstat, never followed) must be a unix
 * socket. endpoints.add is reachable by a browser-mode token holder, and dialing arbitrary paths — or describing
 * what is there ("a regular file", "a directory", "nothing exists") — would let them probe the engine's file system.
 * So a missing path, a file, a directory, a symlink (even to a socket) and a path this process may not look at all
 * get one and the same answer, naming only the check that failed.
 */
import { lstat } from 'node:fs/promises';
import { PodscopeError } from '../../../shared/domain/errors';

export const NOT_A_SOCKET = 'not found or not a unix socket';

export async function checkEndpointSocket(socketPath: string): Promise<void> {
  const isSocket = await lstat(socketPath).then(
    (st) => st.isSocket(),
    () => false,
  );
  if (!isSocket) {
    throw new PodscopeError(
      'Unavailable',
      `cannot use CRI endpoint ${socketPath}: ${NOT_A_SOCKET} (give the runtime's socket path itself, not a link to it)`,
      {
        details: { socketPath, check: 'unix-socket' },
      },
    );
  }
}
