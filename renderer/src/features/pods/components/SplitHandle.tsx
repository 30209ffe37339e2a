/**
 * The draggable bar between the pods list and the detail. Pointer drag or ↑/↓ on the focused bar changes the list's
 * share of the view; the share is persisted by the layout store.
 */
import { useRef } from 'react';
import { clampShare, MAX_LIST_SHARE, MIN_LIST_SHARE, usePodsLayout } from '../layout-store';

const KEY_STEP = 0.05;

export function SplitHandle({ container }: { container: React.RefObject<HTMLElement | null> }) {
  const share = usePodsLayout((s) => s.listShare);
  const setShare = usePodsLayout((s) => s.setListShare);
  const dragging = useRef(false);
  const shareAt = (clientY: number) => {
    const box = container.current?.getBoundingClientRect();
    if (!box || box.height <= 0) return share;
    return clampShare((clientY - box.top) / box.height);
  };
  return (
    <div
      className="split-handle"
      role="separator"
      aria-orientation="horizontal"
      aria-label="Resize the list and the detail"
      aria-valuemin={Math.round(MIN_LIST_SHARE * 100)}
      aria-valuemax={Math.round(MAX_LIST_SHARE * 100)}
      aria-valuenow={Math.round(share * 100)}
      tabIndex={0}
      data-testid="pods-split"
      onPointerDown={(e) => {
        dragging.current = true;
        e.currentTarget.setPointerCapture(e.pointerId);
        e.preventDefault();
      }}
      onPointerMove={(e) => {
        if (dragging.current) setShare(shareAt(e.clientY));
      }}
      onPointerUp={(e) => {
        dragging.current = false;
        e.currentTarget.releasePointerCapture(e.pointerId);
      }}
      onKeyDown={(e) => {
        if (e.key === 'ArrowUp') setShare(share - KEY_STEP);
        else if (e.key === 'ArrowDown') setShare(share + KEY_STEP);
        else return;
        e.preventDefault();
      }}
    />
  );
}
