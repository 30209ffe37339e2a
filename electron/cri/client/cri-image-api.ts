/**
 * The CRI ImageService from the client side (crictl's pull/images/rmi/imagefsinfo over any runtime.v1 endpoint):
 * the connection is checked with Version first (connectCri), then ImageService calls go to the same socket.
 * Loading an archive has no CRI call (containerd does it with `ctr import`), so it is not offered here.
 */
import { credentials, Metadata, type CallOptions, type ServiceError } from '@grpc/grpc-js';
import type { ImageView } from '../../../shared/domain/streams';
import type { RegistryAuth } from '../../engine/api';
import * as pb from '../generated/runtime_v1';
import { fromGrpcError } from '../errors';
import { connectCri, type CriConnectionOptions } from './connection';

/** An image as both the local store and a CRI endpoint can describe it (the app's ImageView). */
export type ImageSummary = ImageView;

export interface CriImageApi {
  pull(ref: string, auth?: RegistryAuth): Promise<{ imageRef: string }>;
  list(ref?: string): Promise<ImageSummary[]>;
  /** undefined when the endpoint does not have it (ImageStatus's empty answer) */
  status(ref: string, verbose?: boolean): Promise<{ image: ImageSummary; info: Record<string, string> } | undefined>;
  remove(ref: string): Promise<void>;
  fsInfo(): Promise<pb.ImageFsInfoResponse>;
  close(): void;
}

export function fromCriImage(i: pb.Image): ImageSummary {
  return {
    id: i.id,
    repoTags: i.repoTags,
    repoDigests: i.repoDigests,
    size: Number(i.size),
    ...(i.uid && { uid: Number(i.uid.value) }),
    username: i.username,
    pinned: i.pinned,
  };
}

type UnaryMethod<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  cb: (e: ServiceError | null, res: Res) => void,
) => unknown;

export async function connectCriImages(
  address: string,
  opts: CriConnectionOptions & { pullTimeoutMs?: number } = {},
): Promise<CriImageApi> {
  const conn = await connectCri(address, opts);
  conn.close();
  const client = new pb.ImageServiceClient(conn.address, credentials.createInsecure(), {
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    'grpc.default_authority': 'localhost',
  });
  const call = <Req, Res>(
    method: (c: pb.ImageServiceClient) => UnaryMethod<Req, Res>,
    req: Req,
    timeoutMs = opts.callTimeoutMs ?? 120_000,
  ): Promise<Res> =>
    new Promise<Res>((resolve, reject) => {
      const fn = method(client).bind(client) as UnaryMethod<Req, Res>;
      fn(req, new Metadata(), { deadline: Date.now() + timeoutMs }, (e, res) =>
        e ? reject(fromGrpcError(e, conn.address)) : resolve(res),
      );
    });
  const spec = (image: string) => pb.ImageSpec.fromPartial({ image });
  return {
    async pull(ref, auth) {
      const req = pb.PullImageRequest.fromPartial({
        image: spec(ref),
        ...(auth && {
          auth: {
            username: auth.username ?? '',
            password: auth.password ?? '',
            auth: auth.auth ?? '',
            identityToken: auth.identityToken ?? '',
            registryToken: auth.registryToken ?? '',
            serverAddress: '',
          },
        }),
      });
      // crictl waits as long as a pull takes (no deadline by default); ours is generous
      const res = await call<pb.PullImageRequest, pb.PullImageResponse>((c) => c.pullImage, req, opts.pullTimeoutMs ?? 30 * 60_000);
      return { imageRef: res.imageRef };
    },
    async list(ref) {
      const res = await call<pb.ListImagesRequest, pb.ListImagesResponse>((c) => c.listImages, {
        filter: ref ? { image: spec(ref) } : undefined,
      });
      return res.images.map(fromCriImage);
    },
    async status(ref, verbose = false) {
      const res = await call<pb.ImageStatusRequest, pb.ImageStatusResponse>((c) => c.imageStatus, { image: spec(ref), verbose });
      return res.image ? { image: fromCriImage(res.image), info: res.info } : undefined;
    },
    async remove(ref) {
      await call<pb.RemoveImageRequest, pb.RemoveImageResponse>((c) => c.removeImage, { image: spec(ref) });
    },
    fsInfo: () => call<pb.ImageFsInfoRequest, pb.ImageFsInfoResponse>((c) => c.imageFsInfo, {}),
    close: () => client.close(),
  };
}
