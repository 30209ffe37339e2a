/**
 * What the image commands need, from the engine's own store (no --endpoint) or from any CRI runtime's ImageService
 * (--endpoint). Loading an archive exists only locally: CRI has no call for it.
 */
import { join } from 'node:path';
import { PodscopeError } from '../../shared/domain/errors';
import type { PullProgress, RegistryAuth } from '../engine/images/types';
import type { ImageSummary } from '../cri/client/cri-image-api';
import { imageVerboseInfo, imageViewOf } from '../engine/images/verbose-info';
import { engineOptionsFromFlags, type Flags } from './args';

export type { ImageSummary };

export interface CliImages {
  /** where the images live, for messages: "the local store" or the endpoint address */
  readonly where: string;
  pull(ref: string, auth?: RegistryAuth, onProgress?: (p: PullProgress) => void): Promise<string>;
  list(ref?: string): Promise<ImageSummary[]>;
  status(ref: string, verbose?: boolean): Promise<{ image: ImageSummary; info: Record<string, string> } | undefined>;
  remove(ref: string): Promise<void>;
  load(file: string): Promise<ImageSummary[]>;
}

export async function withImages<T>(flags: Flags, fn: (api: CliImages) => Promise<T>): Promise<T> {
  if (typeof flags.endpoint === 'string') {
    const { connectCriImages } = await import('../cri/client/cri-image-api');
    const cri = await connectCriImages(flags.endpoint);
    try {
      return await fn({
        where: flags.endpoint,
        pull: async (ref, auth) => (await cri.pull(ref, auth)).imageRef,
        list: (ref) => cri.list(ref),
        status: (ref, verbose) => cri.status(ref, verbose),
        remove: (ref) => cri.remove(ref),
        load: async () => {
          throw new PodscopeError(
            'Unimplemented',
            `loading an image archive has no CRI call: load it into the runtime behind ${flags.endpoint} with its own tool (ctr images import, podman load), or run podscope images load without --endpoint`,
          );
        },
      });
    } finally {
      cri.close();
    }
  }
  // The image store alone, under its own lock (engine/images/store-lock.ts), not an engine: the app, `serve` or
  // `cri` may hold the state dir, and listing, inspecting or loading images beside them is safe.
  const { LocalImageStore } = await import('../engine/images/store');
  const { NodeProcessRunner } = await import('../engine/os/exec');
  const { DEFAULT_ENGINE_OPTIONS } = await import('../engine/options');
  const options = { ...DEFAULT_ENGINE_OPTIONS, ...engineOptionsFromFlags(flags) };
  const store = await LocalImageStore.open({
    root: join(options.stateDir, 'images'),
    runner: new NodeProcessRunner(),
    insecureRegistries: options.insecureRegistries,
    registryMirrors: options.registryMirrors,
  });
  return fn({
    where: 'the local image store',
    pull: async (ref, auth, onProgress) => (await store.pull(ref, { ...(auth && { auth }), ...(onProgress && { onProgress }) })).id,
    list: async (ref) => {
      if (!ref) return (await store.list()).map(imageViewOf);
      const rec = await store.resolve(ref);
      return rec ? [imageViewOf(rec)] : [];
    },
    status: async (ref, verbose) => {
      const rec = await store.resolve(ref);
      if (!rec) return undefined;
      const info: Record<string, string> = verbose ? { info: imageVerboseInfo(rec) } : {};
      return { image: imageViewOf(rec), info };
    },
    remove: (ref) => store.remove(ref),
    load: async (file) => (await store.load(file)).map(imageViewOf),
  });
}

/** crictl's --creds USER[:PASS] (a missing password is an error here: there is no terminal prompt). */
export function credsToAuth(creds: string | undefined, authB64: string | undefined): RegistryAuth | undefined {
  if (authB64) return { auth: authB64 };
  if (creds === undefined) return undefined;
  const i = creds.indexOf(':');
  if (i <= 0) throw new PodscopeError('InvalidArgument', '--creds must be USERNAME:PASSWORD', { details: { field: 'creds' } });
  return { username: creds.slice(0, i), password: creds.slice(i + 1) };
}

/** docker/go-units HumanSize as crictl prints sizes: decimal units, 4 significant digits ("1.05MB"). */
export function humanSize(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let n = bytes;
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${Number(n.toPrecision(4))}${units[i]}`;
}

/** `127.0.0.1:5000/busybox:1` ⇒ ['127.0.0.1:5000/busybox', '1'] (the split crictl images prints). */
export function repoAndTag(tag: string): [string, string] {
  const i = tag.lastIndexOf(':');
  return i > tag.lastIndexOf('/') ? [tag.slice(0, i), tag.slice(i + 1)] : [tag, '<none>'];
}
