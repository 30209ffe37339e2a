/** The terminal's toolbar: exec or attach, the command to exec, (re)start, and the session's state and size. */
import { Segmented } from '../../../../lib/ui/Segmented';
import type { TerminalMode, TerminalState } from '../api/use-terminal-session';

const SHELLS = ['/bin/sh', '/bin/bash', '/bin/ash'];

export function TerminalToolbar({
  containerId,
  canAttach,
  mode,
  onMode,
  command,
  onCommand,
  onRestart,
  state,
}: {
  containerId: string;
  /** the container keeps stdin open, so its own process can be attached to */
  canAttach: boolean;
  mode: TerminalMode;
  onMode: (mode: TerminalMode) => void;
  command: string;
  onCommand: (command: string) => void;
  onRestart: () => void;
  state: TerminalState;
}) {
  return (
    <div className="toolbar toolbar-plain">
      {canAttach && (
        <Segmented
          label="Terminal mode"
          segments={[
            { id: 'exec', label: 'Exec', title: 'run a new process in the container' },
            { id: 'attach', label: 'Attach', title: "connect to the container's own process (its stdin and output)" },
          ]}
          value={mode}
          onChange={onMode}
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
            onChange={(e) => onCommand(e.target.value)}
            onKeyDown={(e) => e.key === 'Enter' && onRestart()}
          />
          <datalist id={`shells-${containerId}`}>
            {SHELLS.map((s) => (
              <option key={s} value={s} />
            ))}
          </datalist>
        </>
      )}
      <button type="button" className="btn" onClick={onRestart}>
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
  );
}
