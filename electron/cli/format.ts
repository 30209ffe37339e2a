/** Terminal output in crictl's style: 13-character ids, relative ages, aligned columns. */
export function shortId(id: string): string {
  return id.slice(0, 13);
}

export function age(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} seconds ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} minute${m === 1 ? '' : 's'} ago`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h} hour${h === 1 ? '' : 's'} ago`;
  return `${Math.round(h / 24)} days ago`;
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('   ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** docker/go-units HumanSize as crictl prints sizes: decimal units, 4 significant digits ("1.05MB"). */
export function humanSize(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let n = bytes;
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${Number(n.toPrecision(4))}${units[i]}`;
}

/** `127.0.0.1:5000/busybox:1` ⇒ ['127.0.0.1:5000/busybox', '1'] (the split crictl images prints). */
export function repoAndTag(tag: string): [string, string] {
  const i = tag.lastIndexOf(':');
  return i > tag.lastIndexOf('/') ? [tag.slice(0, i), tag.slice(i + 1)] : [tag, '<none>'];
}
