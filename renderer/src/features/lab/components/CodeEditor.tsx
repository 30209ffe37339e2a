/**
 * The CodeMirror 6 editor behind ConflistEditor (loaded lazily: it is most of the lab's weight). JSON highlighting,
 * line numbers, bracket matching, and the engine's validation issues as lint diagnostics at their positions (wavy
 * underline, gutter marker, message on hover). The editor lives in a shadow root: CodeMirror injects its styles as
 * a <style> element, which the app's CSP (style-src 'self') refuses in the document, while a shadow root takes them
 * as a constructed stylesheet. Tab is left to the browser (focus moves on, no keyboard trap). History and keys are
 * @codemirror/commands'.
 */
import { useEffect, useRef } from 'react';
import { json } from '@codemirror/lang-json';
import { bracketMatching, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { Annotation, EditorState, Transaction } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, highlightSpecialChars, keymap, lineNumbers } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import type { LabIssue } from '../../../../../shared/domain/lab';
import { issueRange } from '../editor-ranges';

export interface CodeEditorProps {
  value: string;
  onChange: (v: string) => void;
  issues: LabIssue[];
  /** select this range and focus the editor (bump `n` to jump again to the same place) */
  focusAt?: { from: number; to: number; n: number };
  label: string;
}

/** marks transactions that carry the parent's value in, so they are not echoed back as edits */
const external = Annotation.define<boolean>();

const highlight = HighlightStyle.define([
  { tag: t.propertyName, color: 'var(--accent)' },
  { tag: t.string, color: 'var(--ok)' },
  { tag: t.number, color: 'var(--info)' },
  { tag: [t.bool, t.null], color: 'var(--warn)', fontWeight: '600' },
  { tag: [t.brace, t.squareBracket, t.separator], color: 'var(--text-3)' },
  { tag: t.invalid, color: 'var(--bad)' },
]);

const theme = EditorView.theme({
  '&': { height: '100%', fontSize: '12px', backgroundColor: 'var(--bg-code)', color: 'var(--text)' },
  '&.cm-focused': { outline: '2px solid var(--accent)', outlineOffset: '-2px' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '18px' },
  '.cm-content': { caretColor: 'var(--text)', padding: '8px 0' },
  '.cm-cursor': { borderLeftColor: 'var(--text)' },
  '.cm-gutters': { backgroundColor: 'var(--bg-sunken)', color: 'var(--text-3)', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'color-mix(in srgb, var(--accent) 7%, transparent)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': {
    backgroundColor: 'color-mix(in srgb, var(--accent) 25%, transparent) !important',
  },
  // the lint package draws its underline and gutter marker as data: SVGs, whose inline styles the CSP refuses:
  // a CSS wavy underline and a plain dot instead
  '.cm-lintRange-error': {
    backgroundImage: 'none',
    backgroundColor: 'var(--bad-soft)',
    textDecoration: 'underline wavy var(--bad)',
    textDecorationThickness: '1.5px',
    textDecorationSkipInk: 'none',
    textUnderlineOffset: '3px',
  },
  '.cm-lint-marker': { width: '10px', height: '10px', marginTop: '4px' },
  '.cm-lint-marker-error': { content: 'none', borderRadius: '50%', backgroundColor: 'var(--bad)' },
  '.cm-tooltip': { backgroundColor: 'var(--bg-sunken)', color: 'var(--text)', border: '1px solid var(--border-strong)' },
  '.cm-matchingBracket': { backgroundColor: 'color-mix(in srgb, var(--ok) 25%, transparent)' },
});

function diagnostics(text: string, issues: LabIssue[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const i of issues) {
    const r = issueRange(text, i);
    if (!r) continue;
    out.push({ from: r.from, to: r.to, severity: 'error', source: 'conflist', message: i.path ? `${i.path}: ${i.message}` : i.message });
  }
  return out;
}

export default function CodeEditor({ value, onChange, issues, focusAt, label }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const changeRef = useRef(onChange);
  useEffect(() => {
    changeRef.current = onChange;
  }, [onChange]);

  useEffect(() => {
    const el = host.current!;
    const root = el.shadowRoot ?? el.attachShadow({ mode: 'open' });
    const mount = document.createElement('div');
    mount.className = 'cm-host';
    mount.style.height = '100%';
    root.appendChild(mount);
    const v = new EditorView({
      root,
      parent: mount,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          highlightSpecialChars(),
          drawSelection(),
          highlightActiveLine(),
          bracketMatching(),
          json(),
          syntaxHighlighting(highlight),
          lintGutter(),
          history(),
          // the standard keys (Enter indents per the JSON grammar, undo/redo, selection moves); Tab is not bound, so
          // focus can always leave the editor
          keymap.of([...defaultKeymap, ...historyKeymap]),
          theme,
          EditorView.contentAttributes.of({ 'aria-label': label, spellcheck: 'false', 'data-testid': 'lab-editor-content' }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged && !u.transactions.some((tr) => tr.annotation(external))) changeRef.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      mount.remove();
      view.current = undefined;
    };
    // the editor is made once; value and issues flow in through the effects below
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // a value set from outside (a seed, a reset) replaces the document; the editor's own edits are already in it
  useEffect(() => {
    const v = view.current;
    if (!v || v.state.doc.toString() === value) return;
    // not an edit of the user's: it is neither echoed back nor undoable
    v.dispatch({
      changes: { from: 0, to: v.state.doc.length, insert: value },
      annotations: [external.of(true), Transaction.addToHistory.of(false)],
    });
  }, [value]);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    v.dispatch(setDiagnostics(v.state, diagnostics(v.state.doc.toString(), issues)));
  }, [issues, value]);

  useEffect(() => {
    const v = view.current;
    if (!v || !focusAt) return;
    const len = v.state.doc.length;
    v.dispatch({ selection: { anchor: Math.min(focusAt.from, len), head: Math.min(focusAt.to, len) }, scrollIntoView: true });
    v.focus();
  }, [focusAt]);

  return <div ref={host} className="lab-cm" data-testid="lab-editor" />;
}
