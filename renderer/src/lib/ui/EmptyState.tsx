export function EmptyState({ title, children, action }: { title: string; children?: React.ReactNode; action?: React.ReactNode }) {
  return (
    <div className="empty">
      <div className="empty-title">{title}</div>
      {children && <div className="empty-body">{children}</div>}
      {action && <div className="empty-action">{action}</div>}
    </div>
  );
}

export function NotAvailable({ what, runtime }: { what: string; runtime?: string }) {
  return (
    <EmptyState title={`${what}: not available from this runtime`}>
      This endpoint{runtime ? ` (${runtime})` : ''} speaks CRI only, and CRI does not carry it. Podscope records this information for
      sandboxes run by its own engine; nothing is reconstructed or guessed here.
    </EmptyState>
  );
}
