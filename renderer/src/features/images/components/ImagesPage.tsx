/**
 * The endpoint's images: pull (with progress where the runtime reports it), load an archive (local store), list, inspect
 * layers and config, remove.
 * A refused removal (an image a container still uses) shows the runtime's own error, code and message.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type { ImageView } from '../../../../../shared/domain/streams';
import { useClient } from '../../../lib/connection-context';
import { useCurrentEndpoint, useEndpointCapabilities, useEndpointId } from '../../../lib/endpoint';
import { byteSize, shortId } from '../../../lib/format';
import { PullProgress, useImagePull } from '../../../lib/use-image-pull';
import { ConfirmDialog } from '../../../lib/ui/Dialog';
import { CopyButton } from '../../../lib/ui/CopyButton';
import { EmptyState } from '../../../lib/ui/EmptyState';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { JsonView } from '../../../lib/ui/JsonView';
import { KeyValues, LabelChips, Section } from '../../../lib/ui/KeyValues';
import { Pill } from '../../../lib/ui/StatusPill';
import { imageDetailQuery, imagesQuery } from '../api/queries';
import { queryKeys } from '../../../lib/query-keys';
import { LoadImageForm } from './LoadImageForm';

/** crictl images shows repository and tag apart; untagged images show <none> */
export function repoAndTag(tag: string | undefined): [string, string] {
  if (!tag) return ['<none>', '<none>'];
  const at = tag.lastIndexOf(':');
  return at > tag.lastIndexOf('/') ? [tag.slice(0, at), tag.slice(at + 1)] : [tag, 'latest'];
}

export function ImagesPage() {
  const client = useClient();
  const endpointId = useEndpointId();
  const endpoint = useCurrentEndpoint();
  const caps = useEndpointCapabilities();
  const qc = useQueryClient();
  const images = useQuery(imagesQuery(client, endpointId));
  const [ref, setRef] = useState('');
  const [filter, setFilter] = useState('');
  const [selected, setSelected] = useState<string>();
  const [confirm, setConfirm] = useState<ImageView>();
  const refresh = () => qc.invalidateQueries({ queryKey: queryKeys.images(endpointId) });
  const { pull, progress } = useImagePull(endpointId, () => void refresh());
  const remove = useMutation({
    mutationFn: (id: string) => client.call('images.remove', { endpointId, ref: id }),
    onSuccess: (_r, id) => {
      if (selected === id) setSelected(undefined);
    },
    onSettled: () => refresh(),
  });
  const q = filter.trim().toLowerCase();
  const rows = useMemo(
    () => (images.data ?? []).filter((i) => !q || i.id.includes(q) || i.repoTags.some((t) => t.toLowerCase().includes(q))),
    [images.data, q],
  );
  const current = rows.find((i) => i.id === selected);
  const where = endpoint?.kind === 'cri' ? `${endpoint.label} (CRI ImageService)` : 'the built-in engine’s image store';

  return (
    <div className="page images-page">
      <header className="page-head">
        <h1>Images</h1>
        <span className="muted">on {where}</span>
      </header>
      <form
        className="toolbar"
        aria-label="Pull an image"
        onSubmit={(e) => {
          e.preventDefault();
          if (ref.trim()) pull.mutate(ref.trim());
        }}
      >
        <input
          className="input mono input-image"
          aria-label="Image to pull"
          placeholder="busybox:1.36 or 127.0.0.1:5000/app:1"
          value={ref}
          onChange={(e) => setRef(e.target.value)}
        />
        <button type="submit" className="btn btn-primary" disabled={!ref.trim() || pull.isPending || caps.images === false}>
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
          onChange={(e) => setFilter(e.target.value)}
        />
        <span className="toolbar-count muted small">{images.data ? `${rows.length} of ${images.data.length}` : ''}</span>
        <button type="button" className="btn" onClick={() => void refresh()} disabled={images.isFetching}>
          Refresh
        </button>
      </form>
      <LoadImageForm endpointId={endpointId} local={endpoint?.kind !== 'cri'} onLoaded={() => void refresh()} />
      {pull.isError && <ErrorView error={pull.error} title={`Could not pull ${pull.variables}`} />}
      {remove.isError && <ErrorView error={remove.error} title="The image was not removed" />}
      {images.isError ? (
        <ErrorView error={images.error} title="Could not list the images" />
      ) : images.data && images.data.length === 0 ? (
        <EmptyState title="No images yet">Pull one above; containers are created from images the endpoint has.</EmptyState>
      ) : (
        <div className="images-layout">
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
                      onClick={() => setSelected(img.id)}
                    >
                      <td className="mono">
                        <button type="button" className="link" onClick={() => setSelected(img.id)}>
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
                            disabled={remove.isPending}
                            onClick={(e) => {
                              e.stopPropagation();
                              setConfirm(img);
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
          {current && <ImageInspect image={current} />}
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
        onClose={() => setConfirm(undefined)}
        onConfirm={() => {
          if (confirm) remove.mutate(confirm.id);
          setConfirm(undefined);
        }}
      />
    </div>
  );
}

function ImageInspect({ image }: { image: ImageView }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const detail = useQuery(imageDetailQuery(client, endpointId, image.id));
  const d = detail.data;
  const cfg = (d?.config ?? {}) as {
    Entrypoint?: string[];
    Cmd?: string[];
    Env?: string[];
    WorkingDir?: string;
    User?: string;
    ExposedPorts?: Record<string, unknown>;
    Labels?: Record<string, string>;
    StopSignal?: string;
  };
  return (
    <aside className="image-inspect" aria-label={`Image ${image.repoTags[0] ?? image.id}`}>
      <header className="section-head">
        <h3 className="mono">{image.repoTags[0] ?? shortId(image.id)}</h3>
        <CopyButton text={image.id} label="Copy id" />
      </header>
      {detail.isError ? (
        <ErrorView error={detail.error} title="Could not inspect the image" />
      ) : !detail.data ? (
        <div className="muted pad">{detail.isLoading ? 'Loading…' : 'The endpoint no longer has this image.'}</div>
      ) : (
        <>
          <Section title="Image">
            <KeyValues
              rows={[
                ['id', image.id],
                ['tags', image.repoTags.join('\n')],
                ['digests', image.repoDigests.join('\n')],
                ['platform', [d!.os, d!.architecture].filter(Boolean).join('/')],
                ['size', byteSize(image.size)],
                ['created', d!.createdAt ?? ''],
              ]}
            />
          </Section>
          <Section title="Config">
            <KeyValues
              rows={[
                ['entrypoint', cfg.Entrypoint?.join(' ') ?? ''],
                ['cmd', cfg.Cmd?.join(' ') ?? ''],
                ['working dir', cfg.WorkingDir ?? ''],
                ['user', cfg.User ?? ''],
                ['env', cfg.Env?.join('\n') ?? ''],
                ['exposed ports', Object.keys(cfg.ExposedPorts ?? {}).join(', ')],
                ['stop signal', cfg.StopSignal ?? ''],
                ['labels', <LabelChips map={cfg.Labels ?? {}} />],
              ]}
            />
          </Section>
          <Section title={`Layers (${d!.layers.length})`}>
            {d!.layers.length === 0 ? (
              <span className="muted">The endpoint did not report the layers (no verbose image info).</span>
            ) : (
              <ol className="layers mono small" aria-label="Layers">
                {d!.layers.map((l) => (
                  <li key={l} title={l}>
                    {l}
                  </li>
                ))}
              </ol>
            )}
          </Section>
          <details>
            <summary className="small">Verbose info as the endpoint returned it</summary>
            <JsonView value={Object.fromEntries(Object.entries(d!.info).map(([k, v]) => [k, tryJson(v)]))} />
          </details>
        </>
      )}
    </aside>
  );
}

function tryJson(v: string): unknown {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}
