/**
 * A shell in the container: xterm.js over a streaming exec with a tty. Keys go to the process's stdin, its output
 * to the terminal; the terminal is fitted to its box and every new size is sent as a resize (SIGWINCH for the
 * process, so `stty size` and full-screen programs see the real size). Leaving the tab ends the process.
 */
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState } from 'react';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointId } from '../../../../lib/endpoint';
import { openSession } from '../../../../lib/streams';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { Segmented } from '../../../../lib/ui/Segmented';
import { splitWords } from '../model/container-form';
import { mirrorInjectedStyles } from '../../../../lib/mirror-styles';

const SHELLS = ['/bin/sh', '/bin/bash', '/bin/ash'];

/**
 * `attach`: the container keeps stdin open (created with stdin), so its own process can be attached to; `tty` says
 * whether it has a terminal. `onTerminal` hands out the xterm instance (tests type through its input() and read its
 * buffer).
 */
export function ExecTerminal({
  containerId,
  attach,
  onTerminal,
}: {
  containerId: string;
  attach?: { tty: boolean };
  onTerminal?: (t: Terminal) => void;
}) {
  const client = useClient();
  const endpointId = useEndpointId();
  const box = useRef<HTMLDivElement>(null);
  const [command, setCommand] = useState('/bin/sh');
  const [mode, setMode] = useState<'exec' | 'attach'>('exec');
  const [run, setRun] = useState(0);
  const [state, setState] = useState<{ phase: 'connecting' | 'open' | 'exited'; exitCode?: number; size?: string }>({
    phase: 'connecting',
  });
  const [error, setError] = useState<unknown>();
  const restart = () => {
    setError(undefined);
    setState({ phase: 'connecting' });
    setRun((n) => n + 1);
  };

  useEffect(() => {
    const el = box.current;
    if (!el) return;
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
    term.open(el);
    const unmirror = mirrorInjectedStyles(el);
    onTerminal?.(term);
    try {
      fit.fit();
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
              fit.fit();
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

  return (
    <div className="exec-terminal">
      <div className="toolbar toolbar-plain">
        {attach && (
          <Segmented
            label="Terminal mode"
            segments={[
              { id: 'exec', label: 'Exec', title: 'run a new process in the container' },
              { id: 'attach', label: 'Attach', title: "connect to the container's own process (its stdin and output)" },
            ]}
            value={mode}
            onChange={(m) => {
              setError(undefined);
              setState({ phase: 'connecting' });
              setMode(m);
            }}
          />
        )}
        {mode === 'exec' && (
          <>
            <label className="check" htmlFor={`cmd-${containerId}`}>
              Command
            </label>
            <input
              id={`cmd-${containerId}`}
              className="input mono exec-command"
              list={`shells-${containerId}`}
              value={command}
              onChange={(e) => setCommand(e.target.value)}
              onKeyDown={(e) => e.key === 'Enter' && restart()}
            />
            <datalist id={`shells-${containerId}`}>
              {SHELLS.map((s) => (
                <option key={s} value={s} />
              ))}
            </datalist>
          </>
        )}
        <button type="button" className="btn" onClick={restart}>
          {state.phase === 'exited' ? (mode === 'attach' ? 'Attach again' : 'Run again') : mode === 'attach' ? 'Reattach' : 'Restart'}
        </button>
        <span className="toolbar-spacer" />
        <span className="muted small" data-testid="terminal-state">
          {state.phase === 'connecting'
            ? 'connecting…'
            : state.phase === 'open'
              ? `connected · ${state.size ?? ''}`
              : `ended${state.exitCode !== undefined ? ` (exit ${state.exitCode})` : ''}`}
        </span>
      </div>
      {error !== undefined && <ErrorView error={error} title="The terminal could not run" />}
      <div ref={box} className="terminal-box" data-testid="terminal" aria-label="Terminal" />
    </div>
  );
}
