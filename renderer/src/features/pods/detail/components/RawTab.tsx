import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { CopyButton } from '../../../../lib/ui/CopyButton';
import { JsonView } from '../../../../lib/ui/JsonView';

/** The verbose status exactly as the engine returned it. */
export function RawTab({ s }: { s: SandboxStatus }) {
  const text = JSON.stringify(s, null, 2);
  return (
    <div className="stack">
      <div className="toolbar toolbar-plain">
        <span className="muted small">PodSandboxStatus (verbose) as returned by sandbox.status — {text.length.toLocaleString()} bytes</span>
        <span className="toolbar-spacer" />
        <CopyButton text={text} label="Copy JSON" />
      </div>
      <JsonView value={text} className="code-tall" />
    </div>
  );
}
