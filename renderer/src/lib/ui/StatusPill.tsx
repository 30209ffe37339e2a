import type { SandboxState } from '../../../../shared/domain/sandbox';

export type Tone = 'ok' | 'warn' | 'bad' | 'muted' | 'info';

export function Pill({ tone, children, title }: { tone: Tone; children: React.ReactNode; title?: string }) {
  return (
    <span className={`pill pill-${tone}`} title={title}>
      {children}
    </span>
  );
}

export function StatePill({ state }: { state: SandboxState }) {
  return state === 'SANDBOX_READY' ? (
    <Pill tone="ok" title="SANDBOX_READY">
      Ready
    </Pill>
  ) : (
    <Pill tone="muted" title="SANDBOX_NOTREADY">
      NotReady
    </Pill>
  );
}
