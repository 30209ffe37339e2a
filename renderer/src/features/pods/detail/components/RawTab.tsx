import { useState } from 'react';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { crictlInspectpText } from '../../../../../../shared/domain/crictl-inspectp';
import { useCurrentEndpoint } from '../../../../lib/endpoint';
import { CopyButton } from '../../../../lib/ui/CopyButton';
import { JsonView } from '../../../../lib/ui/JsonView';
import { Segmented } from '../../../../lib/ui/Segmented';

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
        <Segmented
          label="Raw status shape"
          segments={[
            { id: 'podscope', label: 'Podscope view' },
            { id: 'crictl', label: 'crictl inspectp' },
          ]}
          value={shape}
          onChange={setShape}
        />
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
