import { useState } from 'react';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { crictlInspectpText } from '../../../../../../shared/domain/crictl-inspectp';
import { useCurrentEndpoint } from '../../../../lib/endpoint';
import { CopyButton } from '../../../../lib/ui/CopyButton';
import { JsonView } from '../../../../lib/ui/JsonView';

type Shape = 'podscope' | 'crictl';

/**
 * The verbose status exactly as the engine returned it, or in the shape `crictl inspectp` prints ({status, info}),
 * which is what users paste into bug reports.
 */
export function RawTab({ s }: { s: SandboxStatus }) {
  const [shape, setShape] = useState<Shape>('podscope');
  const endpoint = useCurrentEndpoint();
  const text = shape === 'crictl' ? crictlInspectpText(s) : JSON.stringify(s, null, 2);
  const rebuilt = shape === 'crictl' && endpoint?.kind === 'cri';
  return (
    <div className="stack">
      <div className="toolbar toolbar-plain">
        <div className="seg" role="tablist" aria-label="Raw status shape">
          <button
            type="button"
            role="tab"
            aria-selected={shape === 'podscope'}
            className={shape === 'podscope' ? 'seg-btn seg-on' : 'seg-btn'}
            onClick={() => setShape('podscope')}
          >
            Podscope view
          </button>
          <button
            type="button"
            role="tab"
            aria-selected={shape === 'crictl'}
            className={shape === 'crictl' ? 'seg-btn seg-on' : 'seg-btn'}
            onClick={() => setShape('crictl')}
          >
            crictl inspectp
          </button>
        </div>
        <span className="muted small" data-testid="raw-caption">
          {shape === 'crictl'
            ? `as \`crictl inspectp ${s.id.slice(0, 13)}\` prints it: status + info${rebuilt ? ` (rebuilt from what ${endpoint?.runtimeName ?? 'the runtime'} returned; its own info may hold more)` : ''}`
            : 'PodSandboxStatus (verbose) as returned by sandbox.status'}{' '}
          — {text.length.toLocaleString()} bytes
        </span>
        <span className="toolbar-spacer" />
        <CopyButton text={text} label="Copy JSON" />
      </div>
      <JsonView value={text} className="code-tall" />
    </div>
  );
}
