/**
 * A container's log as the runtime wrote it (the CRI log file): the last lines, then new ones as they come (follow),
 * stdout and stderr told apart by colour and filterable, a search that filters and marks, wrap on or off.
 * The viewer keeps the newest MAX_LINES; the host pauses the reader while the window has not caught up.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { LogLine } from '../../../../../../shared/domain/streams';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { useLogSession } from '../api/use-log-session';

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

type StreamShown = Record<LogLine['stream'], boolean>;

export function LogViewer({ containerId, name }: { containerId: string; name: string }) {
  const { lines, follow, setFollowing, error, ended, logPath } = useLogSession(containerId);
  const [wrap, setWrap] = useState(true);
  const [timestamps, setTimestamps] = useState(false);
  const [show, setShow] = useState<StreamShown>({ stdout: true, stderr: true });
  const [query, setQuery] = useState('');
  const scroller = useRef<HTMLDivElement>(null);

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
      <LogToolbar
        query={query}
        onQuery={setQuery}
        show={show}
        onShow={setShow}
        counts={counts}
        follow={follow}
        onFollow={setFollowing}
        wrap={wrap}
        onWrap={setWrap}
        timestamps={timestamps}
        onTimestamps={setTimestamps}
      />
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

function LogToolbar({
  query,
  onQuery,
  show,
  onShow,
  counts,
  follow,
  onFollow,
  wrap,
  onWrap,
  timestamps,
  onTimestamps,
}: {
  query: string;
  onQuery: (q: string) => void;
  show: StreamShown;
  onShow: (show: StreamShown) => void;
  counts: { stdout: number; stderr: number };
  follow: boolean;
  onFollow: (on: boolean) => void;
  wrap: boolean;
  onWrap: (on: boolean) => void;
  timestamps: boolean;
  onTimestamps: (on: boolean) => void;
}) {
  return (
    <div className="toolbar toolbar-plain log-toolbar">
      <input
        className="input input-search"
        type="search"
        placeholder="Search the log"
        aria-label="Search the log"
        value={query}
        onChange={(e) => onQuery(e.target.value)}
      />
      <label className="check">
        <input type="checkbox" checked={show.stdout} onChange={(e) => onShow({ ...show, stdout: e.target.checked })} />
        <span className="log-tag log-tag-stdout">stdout</span> <span className="muted small">{counts.stdout}</span>
      </label>
      <label className="check">
        <input type="checkbox" checked={show.stderr} onChange={(e) => onShow({ ...show, stderr: e.target.checked })} />
        <span className="log-tag log-tag-stderr">stderr</span> <span className="muted small">{counts.stderr}</span>
      </label>
      <span className="toolbar-spacer" />
      <label className="check">
        <input type="checkbox" checked={follow} onChange={(e) => onFollow(e.target.checked)} /> Follow
      </label>
      <label className="check">
        <input type="checkbox" checked={wrap} onChange={(e) => onWrap(e.target.checked)} /> Wrap
      </label>
      <label className="check">
        <input type="checkbox" checked={timestamps} onChange={(e) => onTimestamps(e.target.checked)} /> Timestamps
      </label>
    </div>
  );
}
