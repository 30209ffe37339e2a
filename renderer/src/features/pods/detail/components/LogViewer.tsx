/**
 * A container's log as the runtime wrote it (the CRI log file): the last lines, then new ones as they come (follow),
 * stdout and stderr told apart by colour and filterable, a search that filters and marks, wrap on or off.
 * The viewer keeps the newest MAX_LINES; the host pauses the reader while the window has not caught up.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { LogLine } from '../../../../../../shared/domain/streams';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointId } from '../../../../lib/endpoint';
import { openSession } from '../../../../lib/streams';
import { ErrorView } from '../../../../lib/ui/ErrorView';

const MAX_LINES = 20_000;
/** lines drawn at most (the newest matching ones); a search narrows what is drawn, not what is kept */
const MAX_DRAWN = 5000;

function Marked({ text, q }: { text: string; q: string }) {
  if (!q) return <>{text}</>;
  const parts: React.ReactNode[] = [];
  const lower = text.toLowerCase();
  let at = 0;
  for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, at)) {
    if (i > at) parts.push(text.slice(at, i));
    parts.push(<mark key={i}>{text.slice(i, i + q.length)}</mark>);
    at = i + q.length;
  }
  parts.push(text.slice(at));
  return <>{parts}</>;
}

export function LogViewer({ containerId, name }: { containerId: string; name: string }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const [lines, setLines] = useState<LogLine[]>([]);
  const [follow, setFollow] = useState(true);
  const [wrap, setWrap] = useState(true);
  const [timestamps, setTimestamps] = useState(false);
  const [show, setShow] = useState({ stdout: true, stderr: true });
  const [query, setQuery] = useState('');
  const [error, setError] = useState<unknown>();
  const [ended, setEnded] = useState(false);
  const [logPath, setLogPath] = useState('');
  const scroller = useRef<HTMLDivElement>(null);

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

  const q = query.trim().toLowerCase();
  const visible = useMemo(() => {
    const out = lines.filter((l) => show[l.stream] && (!q || l.text.toLowerCase().includes(q)));
    return out.length > MAX_DRAWN ? out.slice(-MAX_DRAWN) : out;
  }, [lines, show, q]);
  const counts = useMemo(() => {
    let err = 0;
    for (const l of lines) if (l.stream === 'stderr') err++;
    return { stdout: lines.length - err, stderr: err };
  }, [lines]);

  // following keeps the newest line in view
  useEffect(() => {
    const el = scroller.current;
    if (follow && el) el.scrollTop = el.scrollHeight;
  }, [visible, follow]);

  return (
    <div className="log-viewer" aria-label={`Log of ${name}`}>
      <div className="toolbar toolbar-plain log-toolbar">
        <input
          className="input input-search"
          type="search"
          placeholder="Search the log"
          aria-label="Search the log"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <label className="check">
          <input type="checkbox" checked={show.stdout} onChange={(e) => setShow((s) => ({ ...s, stdout: e.target.checked }))} />
          <span className="log-tag log-tag-stdout">stdout</span> <span className="muted small">{counts.stdout}</span>
        </label>
        <label className="check">
          <input type="checkbox" checked={show.stderr} onChange={(e) => setShow((s) => ({ ...s, stderr: e.target.checked }))} />
          <span className="log-tag log-tag-stderr">stderr</span> <span className="muted small">{counts.stderr}</span>
        </label>
        <span className="toolbar-spacer" />
        <label className="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollowing(e.target.checked)} /> Follow
        </label>
        <label className="check">
          <input type="checkbox" checked={wrap} onChange={(e) => setWrap(e.target.checked)} /> Wrap
        </label>
        <label className="check">
          <input type="checkbox" checked={timestamps} onChange={(e) => setTimestamps(e.target.checked)} /> Timestamps
        </label>
      </div>
      {error !== undefined && <ErrorView error={error} title="Could not read the log" />}
      <div
        ref={scroller}
        className={wrap ? 'log-lines log-wrap' : 'log-lines'}
        role="log"
        aria-live={follow ? 'polite' : 'off'}
        aria-label="Log lines"
        tabIndex={0}
      >
        {visible.length === 0 ? (
          <div className="muted pad">
            {q ? 'No line matches the search.' : ended || !follow ? 'The log is empty.' : 'Waiting for output…'}
          </div>
        ) : (
          visible.map((l, i) => (
            <div key={i} className={`log-line log-${l.stream}`} data-stream={l.stream}>
              {timestamps && <span className="log-time">{l.time}</span>}
              <span className="log-text">
                <Marked text={l.text} q={q} />
              </span>
            </div>
          ))
        )}
      </div>
      <div className="log-foot muted small">
        <span className="mono">{logPath}</span>
        <span className="toolbar-spacer" />
        {q ? `${visible.length} matching of ${lines.length} lines` : `${lines.length} lines`}
        {follow && !ended ? ' · following' : ended ? ' · ended' : ''}
      </div>
    </div>
  );
}
