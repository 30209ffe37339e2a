/**
 * The endpoint's images: pull (with progress where the runtime reports it), load an archive (local store), list, inspect
 * layers and config, remove.
 * A refused removal (an image a container still uses) shows the runtime's own error and code, each container it names
 * by its name and short id (model/refusal.ts).
 */
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../../lib/connection-context';
import { queryKeys } from '../../../lib/query-keys';
import { withContainerNames } from '../model/refusal';
import { ConfirmDialog } from '../../../lib/ui/Dialog';
import { EmptyState } from '../../../lib/ui/EmptyState';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { useImagesPage } from '../api/use-images-page';
import { ImageInspect } from './ImageInspect';
import { ImagesTable } from './ImagesTable';
import { LoadImageForm } from './LoadImageForm';
import { PullToolbar } from './PullToolbar';

export function ImagesPage() {
  const m = useImagesPage();
  const { images, pull, remove, confirm } = m;
  const client = useClient();
  // only read once a removal was refused: the names it needs
  const containers = useQuery({
    queryKey: queryKeys.containers(m.endpointId),
    queryFn: () => client.call('containers.list', { endpointId: m.endpointId }),
    enabled: remove.isError,
  });
  return (
    <div className="page images-page">
      <header className="page-head">
        <h1>Images</h1>
        <span className="muted">on {m.where}</span>
      </header>
      <PullToolbar
        imageRef={m.ref}
        onImageRef={m.setRef}
        pull={pull}
        progress={m.progress}
        canPull={m.canPull}
        filter={m.filter}
        onFilter={m.setFilter}
        count={images.data ? `${m.rows.length} of ${images.data.length}` : ''}
        refreshing={images.isFetching}
        onRefresh={() => void m.refresh()}
      />
      <LoadImageForm endpointId={m.endpointId} local={m.local} onLoaded={() => void m.refresh()} />
      {pull.isError && <ErrorView error={pull.error} title={`Could not pull ${pull.variables}`} />}
      {remove.isError && <ErrorView error={withContainerNames(remove.error, containers.data ?? [])} title="The image was not removed" />}
      {images.isError ? (
        <ErrorView error={images.error} title="Could not list the images" />
      ) : images.data && images.data.length === 0 ? (
        <EmptyState title="No images yet">Pull one above; containers are created from images the endpoint has.</EmptyState>
      ) : (
        <div className="images-layout">
          <ImagesTable rows={m.rows} selected={m.selected} onSelect={m.setSelected} onRemove={m.setConfirm} removing={remove.isPending} />
          {m.current && <ImageInspect image={m.current} />}
        </div>
      )}
      <ConfirmDialog
        open={!!confirm}
        title="Remove image"
        danger
        confirmLabel="Remove"
        body={
          <p>
            Remove <span className="mono">{confirm?.repoTags.join(', ') || confirm?.id}</span>? The runtime refuses while a container uses
            it.
          </p>
        }
        onClose={() => m.setConfirm(undefined)}
        onConfirm={() => {
          if (confirm) remove.mutate(confirm.id);
          m.setConfirm(undefined);
        }}
      />
    </div>
  );
}
