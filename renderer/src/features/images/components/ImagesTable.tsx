/** The images list: one row per tag (an untagged image shows <none>), Remove on the first row of each image. */
import type { ImageView } from '../../../../../shared/domain/streams';
import { byteSize, shortId } from '../../../lib/format';
import { Pill } from '../../../lib/ui/StatusPill';

/** crictl images shows repository and tag apart; untagged images show <none> */
export function repoAndTag(tag: string | undefined): [string, string] {
  if (!tag) return ['<none>', '<none>'];
  const at = tag.lastIndexOf(':');
  return at > tag.lastIndexOf('/') ? [tag.slice(0, at), tag.slice(at + 1)] : [tag, 'latest'];
}

export function ImagesTable({
  rows,
  selected,
  onSelect,
  onRemove,
  removing,
}: {
  rows: ImageView[];
  selected: string | undefined;
  onSelect: (id: string) => void;
  /** asks to remove the image (the page confirms first) */
  onRemove: (image: ImageView) => void;
  removing: boolean;
}) {
  return (
    <table className="table images-table" aria-label="Images">
      <thead>
        <tr>
          <th>Repository</th>
          <th>Tag</th>
          <th>Image id</th>
          <th>Size</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {rows.flatMap((img) =>
          (img.repoTags.length ? img.repoTags : [undefined]).map((tag, i) => {
            const [repo, t] = repoAndTag(tag);
            return (
              <tr
                key={`${img.id}-${tag ?? i}`}
                data-image-id={img.id}
                className={img.id === selected ? 'row-selected' : undefined}
                aria-selected={img.id === selected}
                onClick={() => onSelect(img.id)}
              >
                <td className="mono">
                  <button type="button" className="link" onClick={() => onSelect(img.id)}>
                    {repo}
                  </button>
                  {img.pinned && (
                    <>
                      {' '}
                      <Pill tone="info">pinned</Pill>
                    </>
                  )}
                </td>
                <td className="mono">{t}</td>
                <td className="mono" title={img.id}>
                  {shortId(img.id.replace(/^sha256:/, ''))}
                </td>
                <td className="mono">{byteSize(img.size)}</td>
                <td>
                  {i === 0 && (
                    <button
                      type="button"
                      className="btn btn-small btn-danger-outline"
                      aria-label={`Remove ${tag ?? img.id}`}
                      disabled={removing}
                      onClick={(e) => {
                        e.stopPropagation();
                        onRemove(img);
                      }}
                    >
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            );
          }),
        )}
      </tbody>
    </table>
  );
}
