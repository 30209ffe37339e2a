/** runc's own diagnostics: `--log <file> --log-format json` lines, or logrus text on stderr. */
import { open, type FileHandle } from 'node:fs/promises';

export interface RuncLogLine {
  level: string;
  msg: string;
}

export function parseRuncLog(text: string): RuncLogLine[] {
  const lines: RuncLogLine[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    try {
      const j = JSON.parse(line) as { level?: unknown; msg?: unknown };
      lines.push({ level: String(j.level ?? 'info'), msg: String(j.msg ?? '') });
      continue;
    } catch {
      // not JSON: logrus text form `time="…" level=error msg="…"`, or a bare message
    }
    const m = /level=(\w+)\s+msg="((?:[^"\\]|\\.)*)"/.exec(line);
    lines.push(m ? { level: m[1] ?? 'error', msg: (m[2] ?? '').replace(/\\"/g, '"') } : { level: 'error', msg: line });
  }
  return lines;
}

/** The error-level messages, which are what a person needs to see when runc fails. */
export function runcErrors(lines: RuncLogLine[]): string[] {
  return lines.filter((l) => l.level === 'error' || l.level === 'fatal').map((l) => l.msg);
}

/** What was appended to a log file after `offset` (the file may not exist yet). */
export async function readLogFrom(path: string, offset: number): Promise<string> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch {
    return '';
  }
  try {
    const { size } = await file.stat();
    if (size <= offset) return '';
    const buf = Buffer.alloc(size - offset);
    await file.read(buf, 0, buf.length, offset);
    return buf.toString('utf8');
  } finally {
    await file.close();
  }
}
