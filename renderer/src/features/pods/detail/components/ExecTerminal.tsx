/**
 * A shell in the container: xterm.js over a streaming exec with a tty (use-terminal-session.ts). Leaving the tab ends
 * the process.
 */
import type { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useRef } from 'react';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { useTerminalSession } from '../api/use-terminal-session';
import { TerminalToolbar } from './TerminalToolbar';

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
  const box = useRef<HTMLDivElement>(null);
  const s = useTerminalSession({ box, containerId, attach, onTerminal });
  return (
    <div className="exec-terminal">
      <TerminalToolbar
        containerId={containerId}
        canAttach={!!attach}
        mode={s.mode}
        onMode={s.changeMode}
        command={s.command}
        onCommand={s.setCommand}
        onRestart={s.restart}
        state={s.state}
      />
      {s.error !== undefined && <ErrorView error={s.error} title="The terminal could not run" />}
      <div ref={box} className="terminal-box" data-testid="terminal" aria-label="Terminal" />
    </div>
  );
}
