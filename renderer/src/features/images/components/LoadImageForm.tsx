/**
 * Load an image from a file on the engine's host: an OCI image layout (a directory or its tar) or a `docker save`
 * archive, as `podscope images load` does. The path is the host's, since the engine reads it; a CRI endpoint has no
 * call for loading, so the form says which tool to use there instead of offering a button that cannot work.
 */
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { ImageView } from '../../../../../shared/domain/streams';
import { useClient } from '../../../lib/connection-context';
import { ErrorView } from '../../../lib/ui/ErrorView';

export function LoadImageForm({
  endpointId,
  local,
  onLoaded,
}: {
  endpointId: string;
  local: boolean;
  onLoaded: (images: ImageView[]) => void;
}) {
  const client = useClient();
  const [path, setPath] = useState('');
  const load = useMutation({
    mutationFn: (p: string) => client.call('images.load', { endpointId, path: p }),
    onSuccess: (images) => onLoaded(images),
  });
  const typed = path.trim();
  const problem = typed && !typed.startsWith('/') ? 'an absolute path on the engine’s host, e.g. /tmp/app.tar' : undefined;
  if (!local)
    return (
      <p className="muted small" data-testid="load-image-unsupported">
        Loading an archive has no CRI call: load it into this runtime with its own tool (ctr images import, podman load).
      </p>
    );
  return (
    <>
      <form
        className="toolbar"
        aria-label="Load an image"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed && !problem) load.mutate(typed);
        }}
      >
        <input
          className="input mono input-image"
          aria-label="Image archive or layout to load"
          aria-invalid={problem ? true : undefined}
          placeholder="/path/to/image.tar (docker save, OCI layout dir or tar)"
          value={path}
          onChange={(e) => setPath(e.target.value)}
        />
        <button type="submit" className="btn" disabled={!typed || !!problem || load.isPending}>
          {load.isPending ? 'Loading…' : 'Load image'}
        </button>
        {problem && (
          <span className="small text-bad" role="alert">
            {problem}
          </span>
        )}
        {load.isSuccess && !load.isPending && (
          <span className="small text-ok" role="status">
            {/* every tag: an image already in the store keeps its older tags, and the archive's may not come first */}
            Loaded {load.data.map((i) => i.repoTags.join(', ') || i.id).join('; ') || 'nothing (the archive holds no image)'}
          </span>
        )}
      </form>
      {load.isError && <ErrorView error={load.error} title={`Could not load ${load.variables}`} />}
    </>
  );
}
