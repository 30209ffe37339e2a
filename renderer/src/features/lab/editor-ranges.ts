/**
 * Where a validation issue sits in the conflist text, as a [from, to) range for the editor's underline: the engine
 * reports the offset where the parser stopped (JSON errors) or where the offending value starts (schema errors, when
 * its path is in the text). A string, number or literal is underlined whole; an object or array up to its closing
 * bracket when that is on the same line, else its opening bracket; a parse error one character (the last one when
 * the parser ran out of text). Issues without an offset have no range (they are listed under the editor only).
 */
import type { LabIssue } from '../../../../shared/domain/lab';

export interface IssueRange {
  from: number;
  to: number;
}

function valueEnd(text: string, start: number): number {
  const c = text[start];
  if (c === '"') {
    let i = start + 1;
    while (i < text.length && text[i] !== '"' && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
    return Math.min(text.length, i + 1);
  }
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (ch === '\n') break;
      if (ch === '"') {
        i++;
        while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
        continue;
      }
      if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return start + 1;
  }
  const m = /^[-+0-9.eE]+|^[a-z]+/.exec(text.slice(start, start + 64));
  return start + Math.max(1, m?.[0].length ?? 1);
}

export function issueRange(text: string, issue: LabIssue): IssueRange | undefined {
  if (issue.offset === undefined || text.length === 0) return undefined;
  const at = Math.max(0, Math.min(issue.offset, text.length));
  // the parser ran out of text (or stopped on a line end): mark the last character there is
  if (at >= text.length) return { from: text.length - 1, to: text.length };
  if (issue.path === '') return { from: at, to: Math.min(text.length, at + 1) };
  return { from: at, to: Math.min(text.length, valueEnd(text, at)) };
}
