/**
 * JSON text positions for the lab's editor: a parse error's line/column (V8 reports only an offset, sometimes not even
 * that), and where a value sits in the text, so a schema error can point at its line too.
 */
import type { LabIssue } from '../../../shared/domain/lab';

export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const clamped = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < clamped; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: clamped - lineStart + 1 };
}

/** JSON.parse, or an issue at the position the parser stopped (the end of the text when it ran out). */
export function parseJsonText(text: string): { value: unknown } | { issue: LabIssue } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (e) {
    const message = (e as Error).message;
    const at = /at position (\d+)/.exec(message);
    const offset = at ? Number(at[1]) : text.trimEnd().length;
    return {
      issue: { path: '', message: `JSON: ${message.replace(/ in JSON at position \d+.*$/, '')}`, offset, ...lineColumn(text, offset) },
    };
  }
}

/**
 * The offset of the value at `path` (object keys and array indices) in a text that parses: a small scanner that walks
 * the same structure JSON.parse built. Undefined when the path is not there. With `atKey`, the offset of the last
 * step's key instead of its value (for "unknown key" problems).
 */
export function locate(text: string, path: Array<string | number>, atKey = false): number | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const skipString = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
  };
  const readString = (): string => {
    const start = i;
    skipString();
    return JSON.parse(text.slice(start, i)) as string;
  };
  const skipValue = (): void => {
    ws();
    const c = text[i];
    if (c === '"') return skipString();
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (c === '{') {
          skipString();
          ws();
          i++; // colon
        }
        skipValue();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        i++; // close
        return;
      }
    }
    while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
  };
  let keyStart = -1;
  for (const step of path) {
    ws();
    const c = text[i];
    if (c === '{' && typeof step === 'string') {
      i++;
      let found = false;
      for (;;) {
        ws();
        if (text[i] === '}') return undefined;
        keyStart = i;
        const key = readString();
        ws();
        i++;
        ws();
        if (key === step) {
          found = true;
          break;
        }
        skipValue();
        ws();
        if (text[i] === ',') i++;
        else return undefined;
      }
      if (!found) return undefined;
    } else if (c === '[' && typeof step === 'number') {
      i++;
      for (let n = 0; ; n++) {
        ws();
        if (text[i] === ']') return undefined;
        if (n === step) break;
        skipValue();
        ws();
        if (text[i] === ',') i++;
        else return undefined;
      }
    } else {
      return undefined;
    }
  }
  ws();
  return atKey && typeof path[path.length - 1] === 'string' ? keyStart : i;
}
