/** The images toolbar: an image ref to pull (with progress where the runtime reports it), the list's filter, Refresh. */
import type { ImagePullProgress } from '../../../../../shared/domain/streams';
import { PullProgress, type useImagePull } from '../../../lib/use-image-pull';

export function PullToolbar({
  imageRef,
  onImageRef,
  pull,
  progress,
  canPull,
  filter,
  onFilter,
  count,
  refreshing,
  onRefresh,
}: {
  imageRef: string;
  onImageRef: (ref: string) => void;
  pull: ReturnType<typeof useImagePull>['pull'];
  progress: ImagePullProgress | undefined;
  /** false when the endpoint serves no images */
  canPull: boolean;
  filter: string;
  onFilter: (filter: string) => void;
  /** "n of m" once the list is known */
  count: string;
  refreshing: boolean;
  onRefresh: () => void;
}) {
  return (
    <form
      className="toolbar"
      aria-label="Pull an image"
      onSubmit={(e) => {
        e.preventDefault();
        if (imageRef.trim()) pull.mutate(imageRef.trim());
      }}
    >
      <input
        className="input mono input-image"
        aria-label="Image to pull"
        placeholder="busybox:1.36 or 127.0.0.1:5000/app:1"
        value={imageRef}
        onChange={(e) => onImageRef(e.target.value)}
      />
      <button type="submit" className="btn btn-primary" disabled={!imageRef.trim() || pull.isPending || !canPull}>
        {pull.isPending ? 'Pulling…' : 'Pull'}
      </button>
      <PullProgress progress={progress} pending={pull.isPending} />
      {pull.isSuccess && !pull.isPending && (
        <span className="small text-ok" role="status">
          Pulled {pull.data.repoTags[0] ?? pull.data.id}
        </span>
      )}
      <span className="toolbar-spacer" />
      <input
        className="input input-search"
        type="search"
        aria-label="Filter images"
        placeholder="Filter by tag or id"
        value={filter}
        onChange={(e) => onFilter(e.target.value)}
      />
      <span className="toolbar-count muted small">{count}</span>
      <button type="button" className="btn" onClick={onRefresh} disabled={refreshing}>
        Refresh
      </button>
    </form>
  );
}
