/**
 * The read-only ImageService subset. Podscope keeps no image store (the pause rootfs is built locally and is the
 * engine's business), so: no images, ImageStatus of anything ⇒ an empty response (the CRI way to say "not
 * present"; docs/semantics.md#image-service), ImageFsInfo ⇒ no filesystems. It exists because cri-client 1.26 (crictl, critest, kubelet)
 * validates an image endpoint by calling ImageFsInfo and refuses it if the answer is UNIMPLEMENTED — with Podscope's
 * socket as `--image-endpoint` (or as the fallback when none is given) nothing would connect otherwise.
 * PullImage/RemoveImage stay undeclared ⇒ UNIMPLEMENTED from grpc-js.
 */
import type { ImageServiceServer } from '../generated/runtime_v1';
import { unary } from './handler';

export function imageServiceImpl(): ImageServiceServer {
  return {
    listImages: unary(async () => ({ images: [] })),
    imageStatus: unary(async () => ({ image: undefined, info: {} })),
    imageFsInfo: unary(async () => ({ imageFilesystems: [], containerFilesystems: [] })),
  };
}
