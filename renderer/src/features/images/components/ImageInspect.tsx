/** One image inspected: ids, tags, digests and platform; the config the runtime uses; its layers; the verbose info. */
import { useQuery } from '@tanstack/react-query';
import type { ImageView } from '../../../../../shared/domain/streams';
import { useClient } from '../../../lib/connection-context';
import { useEndpointId } from '../../../lib/endpoint';
import { byteSize, shortId } from '../../../lib/format';
import { CopyButton } from '../../../lib/ui/CopyButton';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { JsonView } from '../../../lib/ui/JsonView';
import { KeyValues, LabelChips, Section } from '../../../lib/ui/KeyValues';
import { imageDetailQuery } from '../api/queries';

export function ImageInspect({ image }: { image: ImageView }) {
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
                ['created', d!.createdAt ?? <span className="muted">the image config has no created time</span>],
                ['stored', d!.storedAt ?? ''],
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
