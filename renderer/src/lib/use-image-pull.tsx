/**
 * Pulls an image and follows its progress events (the local store reports layers as they download; a CRI
 * endpoint's PullImage reports nothing until it is done, so only "pulling…" shows there).
 */
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { ImagePullProgress } from '../../../shared/domain/streams';
import { useClient } from './connection-context';

export function useImagePull(endpointId: string, onDone?: () => void) {
  const client = useClient();
  const [progress, setProgress] = useState<ImagePullProgress>();
  const pull = useMutation({
    mutationFn: async (ref: string) => {
      const requestId = crypto.randomUUID();
      setProgress(undefined);
      const stop = client.onEvent((e) => {
        if (e.kind === 'image.pull' && e.requestId === requestId) setProgress(e.progress);
      });
      try {
        return await client.call('images.pull', { endpointId, ref, requestId });
      } finally {
        stop();
      }
    },
    onSuccess: () => onDone?.(),
  });
  return { pull, progress };
}

export function progressText(p: ImagePullProgress | undefined): string {
  if (!p) return 'pulling…';
  const pct = p.totalBytes > 0 ? ` ${Math.min(100, Math.round((p.doneBytes / p.totalBytes) * 100))}%` : '';
  return `${p.phase}${pct}`;
}

export function PullProgress({ progress, pending }: { progress?: ImagePullProgress; pending: boolean }) {
  if (!pending) return null;
  const pct = progress && progress.totalBytes > 0 ? Math.min(100, (progress.doneBytes / progress.totalBytes) * 100) : undefined;
  return (
    <div className="pull-progress" role="status" aria-label="Pull progress">
      <progress max={100} value={pct} aria-label="Pulled" />
      <span className="mono small">{progressText(progress)}</span>
    </div>
  );
}
