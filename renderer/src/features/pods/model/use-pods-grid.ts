/**
 * The pods list's virtual scrolling and keys, like a file manager: ↑/↓ (or j/k) move, Home/End jump, PageUp/PageDown
 * move by 15, Space toggles the row's checkbox, Enter opens the detail. The list takes the focus when it appears
 * (unless something else has it) and reports the rows it renders whenever they change.
 */
import { useEffect, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';

/** px: the rows are fixed-height so the virtualizer never measures */
export const ROW_HEIGHT = 30;

export function usePodsGrid({
  pods,
  selectedId,
  onSelect,
  onOpen,
  onToggle,
  onShownRows,
}: {
  pods: SandboxSummary[];
  selectedId?: string;
  onSelect: (id: string) => void;
  onOpen: (id: string) => void;
  onToggle: (id: string) => void;
  onShownRows?: (ids: string[]) => void;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  // ↑/↓ work without a click first: the list takes the focus when it appears, unless something else has it
  useEffect(() => {
    if (!document.activeElement || document.activeElement === document.body) scrollRef.current?.focus({ preventScroll: true });
  }, []);
  const virtualizer = useVirtualizer({
    count: pods.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 6,
    // jsdom and the first paint have no layout; assume a viewport so rows render at once
    initialRect: { width: 1200, height: 600 },
  });
  const rendered = virtualizer.getVirtualItems();
  const renderedIds = rendered.map((v) => pods[v.index]?.id ?? '').join(',');
  useEffect(() => {
    onShownRows?.(renderedIds ? renderedIds.split(',') : []);
  }, [renderedIds, onShownRows]);
  const index = pods.findIndex((p) => p.id === selectedId);

  const go = (i: number) => {
    const p = pods[Math.max(0, Math.min(pods.length - 1, i))];
    if (!p) return;
    onSelect(p.id);
    virtualizer.scrollToIndex(pods.indexOf(p), { align: 'auto' });
  };

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.target instanceof HTMLInputElement) return;
    const keys: Record<string, () => void> = {
      ArrowDown: () => go(index + 1),
      j: () => go(index + 1),
      ArrowUp: () => go(index < 0 ? 0 : index - 1),
      k: () => go(index < 0 ? 0 : index - 1),
      Home: () => go(0),
      End: () => go(pods.length - 1),
      PageDown: () => go(index + 15),
      PageUp: () => go(index - 15),
      ' ': () => selectedId && onToggle(selectedId),
      Enter: () => selectedId && onOpen(selectedId),
    };
    const f = keys[e.key];
    if (f) {
      e.preventDefault();
      f();
    }
  };

  return { scrollRef, rendered, totalSize: virtualizer.getTotalSize(), onKeyDown };
}
