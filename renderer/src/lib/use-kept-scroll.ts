/**
 * One scroller showing several views in turn (the tabs of the pod detail): each view gets back the scroll position
 * it was left at, instead of inheriting the previous view's.
 */
import { useCallback, useLayoutEffect, useRef } from 'react';

export function useKeptScroll<T extends HTMLElement>(view: string) {
  const ref = useRef<T>(null);
  const positions = useRef(new Map<string, number>());
  const current = useRef(view);
  useLayoutEffect(() => {
    const el = ref.current;
    current.current = view;
    if (!el) return;
    const restore = () => {
      if (current.current === view) el.scrollTop = positions.current.get(view) ?? 0;
    };
    restore();
    // parts of a view that render a moment later (live panels) can make the kept position reachable only then
    const frame = requestAnimationFrame(restore);
    return () => cancelAnimationFrame(frame);
  }, [view]);
  const onScroll = useCallback(() => {
    if (ref.current) positions.current.set(current.current, ref.current.scrollTop);
  }, []);
  return [ref, onScroll] as const;
}
