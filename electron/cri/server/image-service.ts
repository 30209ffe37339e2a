/**
 * The CRI ImageService over the engine's image store (electron/engine/images), shaped like containerd's
 * internal/cri/server/images/*.go:
 *   PullImage    ⇒ image_ref is the image id (config digest), as containerd returns; auth from AuthConfig
 *   ListImages   ⇒ every image, or only the one the filter's ref resolves to
 *   ImageStatus  ⇒ a missing image is an EMPTY response, not an error (docs/semantics.md#image-service); verbose adds
 *                  info["info"]: JSON with the image's runtime config, diff ids and platform
 *   RemoveImage  ⇒ removes the image with all its tags; unknown refs succeed; FAILED_PRECONDITION while a container
 *                  uses it
 *   ImageFsInfo  ⇒ the store directory's real usage (bytes and inodes)
 * uid/username come from the image config's User the way containerd's getUserFromImage splits it: a numeric user
 * (before any ':group') is the uid, anything else the username.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import { imageVerboseInfo, type ImageRecord, type ImageStore } from '../../engine/api';
import type { Image, ImageServiceServer } from '../generated/runtime_v1';
import { unary, type CriEngine } from './handler';

export const IMAGE_VERBOSE_INFO_KEY = 'info';

export function userFromImage(user: string | undefined): { uid?: string; username: string } {
  const u = (user ?? '').split(':')[0] ?? '';
  if (u === '') return { username: '' };
  if (/^\d+$/.test(u)) return { uid: u, username: '' };
  return { username: u };
}

export function toCriImage(rec: ImageRecord): Image {
  const { uid, username } = userFromImage(rec.config.User);
  return {
    id: rec.id,
    repoTags: rec.repoTags,
    repoDigests: rec.repoDigests,
    size: String(rec.size),
    uid: uid !== undefined ? { value: uid } : undefined,
    username,
    spec: { image: rec.id, annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: '' },
    pinned: rec.pinned,
  };
}

/** The image store, or UNAVAILABLE when the engine has none (it could not start). */
function storeOf(engine: CriEngine): ImageStore {
  if (!engine.images) throw new PodscopeError('Unavailable', 'the engine has no image store (it failed to start)');
  return engine.images;
}

function refOf(spec: { image: string } | undefined, field: string): string {
  const ref = spec?.image ?? '';
  if (!ref) throw new PodscopeError('InvalidArgument', `${field} must name an image`, { details: { field } });
  return ref;
}

export function imageServiceImpl(engine: CriEngine): ImageServiceServer {
  return {
    pullImage: unary(async (req) => {
      const ref = refOf(req.image, 'image.image');
      const a = req.auth;
      const auth = a && {
        ...(a.username && { username: a.username }),
        ...(a.password && { password: a.password }),
        ...(a.auth && { auth: a.auth }),
        ...(a.identityToken && { identityToken: a.identityToken }),
        ...(a.registryToken && { registryToken: a.registryToken }),
      };
      const rec = await storeOf(engine).pull(ref, { ...(auth && Object.keys(auth).length > 0 && { auth }) });
      return { imageRef: rec.id };
    }),
    listImages: unary(async (req) => {
      if (!engine.images) return { images: [] };
      const ref = req.filter?.image?.image;
      if (ref) {
        const rec = await engine.images.resolve(ref);
        return { images: rec ? [toCriImage(rec)] : [] };
      }
      return { images: (await engine.images.list()).map(toCriImage) };
    }),
    imageStatus: unary(async (req) => {
      const ref = refOf(req.image, 'image.image');
      const rec = await engine.images?.resolve(ref);
      if (!rec) return { image: undefined, info: {} };
      const info: Record<string, string> = {};
      if (req.verbose) {
        info[IMAGE_VERBOSE_INFO_KEY] = imageVerboseInfo(rec);
      }
      return { image: toCriImage(rec), info };
    }),
    removeImage: unary(async (req) => {
      await storeOf(engine).remove(refOf(req.image, 'image.image'));
      return {};
    }),
    imageFsInfo: unary(async () => {
      if (!engine.images) return { imageFilesystems: [], containerFilesystems: [] };
      const u = await engine.images.fsInfo();
      return {
        imageFilesystems: [
          {
            timestamp: String(u.timestampNs),
            fsId: { mountpoint: u.mountpoint },
            usedBytes: { value: String(u.usedBytes) },
            inodesUsed: { value: String(u.inodesUsed) },
          },
        ],
        containerFilesystems: [],
      };
    }),
  };
}
