/**
 * A terminal session in a container: xterm.js in `box` over a streaming exec with a tty (or an attach to the
 * container's own process). Keys go to the process's stdin, its output to the terminal; the terminal is fitted to its
 * box and every new size is sent as a resize (SIGWINCH for the process, so `stty size` and full-screen programs see
 * the real size). A restart, a mode change or unmounting ends the process.
 */
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { useEffect, useState, type RefObject } from 'react';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointId } from '../../../../lib/endpoint';
import { mirrorInjectedStyles } from '../../../../lib/mirror-styles';
import { pageStyleNonce, withStyleNonce } from '../../../../lib/style-nonce';
import { openSession } from '../../../../lib/streams';
import { splitWords } from '../model/container-form';

export type TerminalMode = 'exec' | 'attach';

export interface TerminalState {
  phase: 'connecting' | 'open' | 'exited';
  exitCode?: number;
  /** cols×rows */
  size?: string;
}

export function useTerminalSession({
  box,
  containerId,
  attach,
  onTerminal,
}: {
  box: RefObject<HTMLDivElement | null>;
  containerId: string;
  /** the container keeps stdin open; `tty`: it has a terminal */
  attach?: { tty: boolean };
  onTerminal?: (t: Terminal) => void;
}) {
  const client = useClient();
  const endpointId = useEndpointId();
  const [command, setCommand] = useState('/bin/sh');
  const [mode, setMode] = useState<TerminalMode>('exec');
  const [run, setRun] = useState(0);
  const [state, setState] = useState<TerminalState>({ phase: 'connecting' });
  const [error, setError] = useState<unknown>();
  const restart = () => {
    setError(undefined);
    setState({ phase: 'connecting' });
    setRun((n) => n + 1);
  };
  const changeMode = (m: TerminalMode) => {
    setError(undefined);
    setState({ phase: 'connecting' });
    setMode(m);
  };

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const { term, fit, unmirror } = openTerminal(el);
    onTerminal?.(term);
    try {
      withStyleNonce(el.ownerDocument, () => fit.fit());
    } catch {
      // a box with no layout (hidden) keeps the default 80x24 until the observer fires
    }
    const cmd = splitWords(command);
    const session = openSession(
      client,
      () =>
        mode === 'attach'
          ? client.call('stream.attach', {
              endpointId,
              containerId,
              tty: attach?.tty ?? false,
              stdin: true,
              size: { cols: term.cols, rows: term.rows },
            })
          : client.call('stream.exec', {
              endpointId,
              containerId,
              cmd: cmd.length ? cmd : ['/bin/sh'],
              tty: true,
              stdin: true,
              size: { cols: term.cols, rows: term.rows },
            }),
      {
        // without a tty the process's bare "\n" would not return the cursor
        onData: (bytes) =>
          term.write(mode === 'attach' && !attach?.tty ? new TextDecoder().decode(bytes).replace(/\r?\n/g, '\r\n') : bytes),
        onExit: (e) => {
          if (e.error) setError(Object.assign(new Error(e.error.message), { code: e.error.code }));
          term.write(
            `\r\n\x1b[2m[process ended${e.exitCode !== undefined ? ` with exit code ${e.exitCode}` : ''}${e.reason ? `: ${e.reason}` : ''}]\x1b[0m\r\n`,
          );
          setState((s) => ({ ...s, phase: 'exited', ...(e.exitCode !== undefined && { exitCode: e.exitCode }) }));
        },
      },
    );
    session.id.then(
      () => setState((s) => (s.phase === 'connecting' ? { ...s, phase: 'open', size: `${term.cols}×${term.rows}` } : s)),
      (e: unknown) => {
        setError(e);
        setState({ phase: 'exited' });
      },
    );
    const input = term.onData((data) => {
      void session.id.then((sessionId) => client.call('stream.write', { sessionId, data, encoding: 'utf8' })).catch(() => {});
    });
    const resized = term.onResize(({ cols, rows }) => {
      setState((s) => ({ ...s, size: `${cols}×${rows}` }));
      void session.id.then((sessionId) => client.call('stream.resize', { sessionId, size: { cols, rows } })).catch(() => {});
    });
    const observer =
      typeof ResizeObserver === 'undefined'
        ? undefined
        : new ResizeObserver(() => {
            try {
              withStyleNonce(el.ownerDocument, () => fit.fit());
            } catch {
              // not laid out
            }
          });
    observer?.observe(el);
    term.focus();
    return () => {
      observer?.disconnect();
      input.dispose();
      resized.dispose();
      void session.close();
      term.dispose();
      unmirror();
    };
    // the command is read when the terminal (re)starts only
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, endpointId, containerId, run, mode]);

  return { command, setCommand, mode, changeMode, restart, state, error };
}

/**
 * An xterm fitted to `el`. Its <style> elements are made with the page's style nonce (lib/style-nonce.ts), so the CSP
 * applies them and reports nothing; a page without a nonce (served by something else) mirrors them into a
 * constructed stylesheet instead (undone by `unmirror`).
 */
function openTerminal(el: HTMLDivElement) {
  const term = new Terminal({
    cursorBlink: true,
    convertEol: false,
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    fontSize: 13,
    scrollback: 5000,
    theme: { background: '#0d1117', foreground: '#e6edf3' },
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  withStyleNonce(el.ownerDocument, () => term.open(el));
  return { term, fit, unmirror: pageStyleNonce(el.ownerDocument) ? () => {} : mirrorInjectedStyles(el) };
}
