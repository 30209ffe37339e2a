/**
 * The images page's state and calls: the endpoint's list (filtered by tag or id), the selected image, the one a
 * removal waits to be confirmed for, and the pull and remove mutations, which refresh the list when they settle.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type { ImageView } from '../../../../../shared/domain/streams';
import { useClient } from '../../../lib/connection-context';
import { useCurrentEndpoint, useEndpointCapabilities, useEndpointId } from '../../../lib/endpoint';
import { queryKeys } from '../../../lib/query-keys';
import { useImagePull } from '../../../lib/use-image-pull';
import { imagesQuery } from './queries';

export function useImagesPage() {
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
  return {
    endpointId,
    local: endpoint?.kind !== 'cri',
    where: endpoint?.kind === 'cri' ? `${endpoint.label} (CRI ImageService)` : 'the built-in engine’s image store',
    canPull: caps.images !== false,
    images,
    rows,
    current: rows.find((i) => i.id === selected),
    ref,
    setRef,
    filter,
    setFilter,
    selected,
    setSelected,
    confirm,
    setConfirm,
    refresh,
    pull,
    progress,
    remove,
  };
}
