/**
 * A container's log session: the last 1000 lines, then (following) new ones as they come, the newest MAX_LINES kept.
 * Turning follow on or off starts a new session from a clean slate; unmounting ends it.
 */
import { useEffect, useState } from 'react';
import type { LogLine } from '../../../../../../shared/domain/streams';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointId } from '../../../../lib/endpoint';
import { openSession } from '../../../../lib/streams';

/** lines kept at most: the newest */
const MAX_LINES = 20_000;

export function useLogSession(containerId: string) {
  const client = useClient();
  const endpointId = useEndpointId();
  const [lines, setLines] = useState<LogLine[]>([]);
  const [follow, setFollow] = useState(true);
  const [error, setError] = useState<unknown>();
  const [ended, setEnded] = useState(false);
  const [logPath, setLogPath] = useState('');

  // a new session starts from a clean slate: reset where it is asked for (the pane is keyed by container id)
  const setFollowing = (on: boolean) => {
    setLines([]);
    setError(undefined);
    setEnded(false);
    setFollow(on);
  };

  useEffect(() => {
    const session = openSession(
      client,
      async () => {
        const r = await client.call('logs.follow', { endpointId, containerId, tail: 1000, follow });
        setLogPath(r.logPath);
        return r;
      },
      {
        onLines: (batch) =>
          setLines((old) => (old.length + batch.length > MAX_LINES ? [...old, ...batch].slice(-MAX_LINES) : [...old, ...batch])),
        onExit: (e) => {
          setEnded(true);
          if (e.error) setError(Object.assign(new Error(e.error.message), { code: e.error.code }));
        },
      },
    );
    session.id.catch(setError);
    return () => void session.close();
  }, [client, endpointId, containerId, follow]);

  return { lines, follow, setFollowing, error, ended, logPath };
}
