/**
 * Read-only JSON with light syntax colouring and, optionally, one top-level key highlighted (used to make a
 * plugin's runtimeConfig stand out in its stdin). Rendered as text spans: no HTML from data ever reaches the DOM.
 */
import { Fragment, useMemo } from 'react';

const TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

function colour(line: string): React.ReactNode[] {
  const out: React.ReactNode[] = [];
  let last = 0;
  for (const m of line.matchAll(TOKEN)) {
    if (m.index > last) out.push(line.slice(last, m.index));
    if (m[1])
      out.push(
        <span key={m.index} className={m[2] ? 'j-key' : 'j-str'}>
          {m[1]}
        </span>,
        m[2] ?? '',
      );
    else if (m[3])
      out.push(
        <span key={m.index} className="j-lit">
          {m[3]}
        </span>,
      );
    else
      out.push(
        <span key={m.index} className="j-num">
          {m[4]}
        </span>,
      );
    last = m.index + m[0].length;
  }
  out.push(line.slice(last));
  return out;
}

/** Line range [start, end] of a key's value block at any depth (first match). */
function keyRange(lines: string[], key: string): [number, number] | undefined {
  const start = lines.findIndex((l) => l.trimStart().startsWith(`"${key}":`));
  if (start < 0) return undefined;
  const indent = lines[start]!.length - lines[start]!.trimStart().length;
  if (!/[[{]$/.test(lines[start]!.trimEnd())) return [start, start];
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.length - l.trimStart().length === indent && /^[\]}]/.test(l.trimStart())) return [start, i];
  }
  return [start, lines.length - 1];
}

export function JsonView({ value, highlightKey, className }: { value: unknown; highlightKey?: string; className?: string }) {
  const text = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? 'undefined');
  const lines = useMemo(() => text.split('\n'), [text]);
  const range = highlightKey ? keyRange(lines, highlightKey) : undefined;
  return (
    <pre className={`code ${className ?? ''}`}>
      {lines.map((l, i) => (
        <Fragment key={i}>
          <span className={range && i >= range[0] && i <= range[1] ? 'line line-hl' : 'line'}>{colour(l)}</span>
          {'\n'}
        </Fragment>
      ))}
    </pre>
  );
}

export function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
