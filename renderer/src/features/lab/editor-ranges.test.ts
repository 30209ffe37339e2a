import { describe, expect, it } from 'vitest';
import { issueRange } from './editor-ranges';

const slice = (text: string, r: { from: number; to: number } | undefined) => (r ? text.slice(r.from, r.to) : undefined);

describe('issueRange: where the editor underlines a validation issue', () => {
  const text = '{\n  "name": "a b",\n  "mtu": 1500,\n  "ok": true,\n  "ipam": { "type": "x" },\n  "list": [\n 1 ]\n}';
  it('a schema error on a string, number or literal covers the whole value', () => {
    expect(slice(text, issueRange(text, { path: 'name', message: '', offset: text.indexOf('"a b"') }))).toBe('"a b"');
    expect(slice(text, issueRange(text, { path: 'mtu', message: '', offset: text.indexOf('1500') }))).toBe('1500');
    expect(slice(text, issueRange(text, { path: 'ok', message: '', offset: text.indexOf('true') }))).toBe('true');
  });
  it('an object on one line is covered to its closing brace; one spanning lines only at its opening bracket', () => {
    expect(slice(text, issueRange(text, { path: 'ipam', message: '', offset: text.indexOf('{ "type"') }))).toBe('{ "type": "x" }');
    expect(slice(text, issueRange(text, { path: 'list', message: '', offset: text.indexOf('[') }))).toBe('[');
  });
  it('a parse error marks one character, the last one when the parser ran out of text; no offset, no range', () => {
    expect(slice('{"a": 1,}', issueRange('{"a": 1,}', { path: '', message: 'JSON', offset: 8 }))).toBe('}');
    expect(issueRange('{"a": ', { path: '', message: 'JSON', offset: 6 })).toEqual({ from: 5, to: 6 });
    expect(issueRange(text, { path: 'plugins', message: 'missing' })).toBeUndefined();
  });
});
