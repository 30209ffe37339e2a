import type { SandboxState } from '../../../../shared/domain/sandbox';

export type Tone = 'ok' | 'warn' | 'bad' | 'muted' | 'info';

export function Pill({ tone, children, title }: { tone: Tone; children: React.ReactNode; title?: string }) {
  return (
    <span className={`pill pill-${tone}`} title={title}>
      {children}
    </span>
  );
}

/** `reason` (why NOTREADY) becomes the tooltip; a pending cleanup turns the pill to a warning: something is still held. */
export function StatePill({ state, reason, pending }: { state: SandboxState; reason?: string; pending?: boolean }) {
  return state === 'SANDBOX_READY' ? (
    <Pill tone="ok" title="SANDBOX_READY">
      Ready
    </Pill>
  ) : (
    <Pill tone={pending ? 'warn' : 'muted'} title={reason ? `SANDBOX_NOTREADY: ${reason}` : 'SANDBOX_NOTREADY'}>
      NotReady
    </Pill>
  );
}
