/**
 * The OCI image-spec / Docker v2 schema 2 documents the image store reads (index, manifest, config, a `docker save`
 * manifest.json), validated so a bad document fails with the field it got wrong, e.g.
 * `manifest.layers[1].mediaType: unsupported layer media type "application/x-foo"`. Unknown fields are kept out of
 * the way (passthrough is not needed: only the parts below are used).
 */
import { z } from 'zod';

export const MEDIA_TYPES = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  ociLayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
  ociLayerNondist: 'application/vnd.oci.image.layer.nondistributable.v1.tar',
  ociLayerNondistGzip: 'application/vnd.oci.image.layer.nondistributable.v1.tar+gzip',
  ociLayerNondistZstd: 'application/vnd.oci.image.layer.nondistributable.v1.tar+zstd',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayer: 'application/vnd.docker.image.rootfs.diff.tar',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  dockerForeignLayerGzip: 'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip',
} as const;

export type LayerCompression = 'gzip' | 'zstd' | 'none';

/** Layer media type ⇒ compression; undefined for types that are not image layers. */
export function layerCompression(mediaType: string): LayerCompression | undefined {
  switch (mediaType) {
    case MEDIA_TYPES.ociLayer:
    case MEDIA_TYPES.ociLayerNondist:
    case MEDIA_TYPES.dockerLayer:
      return 'none';
    case MEDIA_TYPES.ociLayerGzip:
    case MEDIA_TYPES.ociLayerNondistGzip:
    case MEDIA_TYPES.dockerLayerGzip:
    case MEDIA_TYPES.dockerForeignLayerGzip:
      return 'gzip';
    case MEDIA_TYPES.ociLayerZstd:
    case MEDIA_TYPES.ociLayerNondistZstd:
      return 'zstd';
    default:
      return undefined;
  }
}

export const INDEX_MEDIA_TYPES: readonly string[] = [MEDIA_TYPES.ociIndex, MEDIA_TYPES.dockerList];
export const MANIFEST_MEDIA_TYPES: readonly string[] = [MEDIA_TYPES.ociManifest, MEDIA_TYPES.dockerManifest];

export const DigestSchema = z.string().regex(/^sha256:[a-f0-9]{64}$/, { message: 'must be a sha256 digest (sha256:<64 hex>)' });

const PlatformSchema = z.object({
  os: z.string(),
  architecture: z.string(),
  variant: z.string().optional(),
  'os.version': z.string().optional(),
});

export const DescriptorSchema = z.object({
  mediaType: z.string({ error: 'is required' }),
  digest: DigestSchema,
  size: z.number().int().nonnegative(),
  platform: PlatformSchema.optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
export type Descriptor = z.infer<typeof DescriptorSchema>;

export const IndexSchema = z.object({
  schemaVersion: z.literal(2),
  mediaType: z.string().optional(),
  manifests: z.array(DescriptorSchema),
  annotations: z.record(z.string(), z.string()).optional(),
});
export type ImageIndex = z.infer<typeof IndexSchema>;

export const ManifestSchema = z.object({
  schemaVersion: z.literal(2),
  mediaType: z.string().optional(),
  config: DescriptorSchema,
  layers: z.array(DescriptorSchema),
});

/** Media types a manifest may name (checked after the shape, so the error can quote the value). */
export function manifestMediaTypeProblem(m: ImageManifest): string | undefined {
  if (m.config.mediaType !== MEDIA_TYPES.ociConfig && m.config.mediaType !== MEDIA_TYPES.dockerConfig) {
    return `manifest.config.mediaType: unsupported config media type ${JSON.stringify(m.config.mediaType)} (want ${MEDIA_TYPES.ociConfig} or ${MEDIA_TYPES.dockerConfig})`;
  }
  const bad = m.layers.findIndex((l) => layerCompression(l.mediaType) === undefined);
  if (bad >= 0) return `manifest.layers[${bad}].mediaType: unsupported layer media type ${JSON.stringify(m.layers[bad]!.mediaType)}`;
  return undefined;
}
export type ImageManifest = z.infer<typeof ManifestSchema>;

const stringArray = z
  .array(z.string())
  .nullish()
  .transform((v) => v ?? undefined);
const objectMap = z
  .record(z.string(), z.object({}).loose())
  .nullish()
  .transform((v) => v ?? undefined);

const RuntimeConfigSchema = z.object({
  User: z.string().optional(),
  ExposedPorts: objectMap,
  Env: stringArray,
  Entrypoint: stringArray,
  Cmd: stringArray,
  Volumes: objectMap,
  WorkingDir: z.string().optional(),
  Labels: z
    .record(z.string(), z.string())
    .nullish()
    .transform((v) => v ?? undefined),
  StopSignal: z.string().optional(),
});

export const ImageConfigSchema = z.object({
  architecture: z.string({ error: 'is required' }),
  os: z.string({ error: 'is required' }),
  variant: z.string().optional(),
  created: z.string().optional(),
  config: RuntimeConfigSchema.nullish().transform((v): Partial<z.infer<typeof RuntimeConfigSchema>> => v ?? {}),
  rootfs: z.object({
    type: z.literal('layers', { error: 'must be "layers"' }),
    diff_ids: z.array(DigestSchema),
  }),
});
export type ImageConfigDoc = z.infer<typeof ImageConfigSchema>;

/** `docker save` manifest.json */
export const DockerSaveManifestSchema = z.array(
  z.object({
    Config: z.string(),
    RepoTags: z
      .array(z.string())
      .nullish()
      .transform((v) => v ?? []),
    Layers: z.array(z.string()),
  }),
);

/** `a.b[0].c: message` for the first few issues. */
export function describeZodError(what: string, error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => {
      const path = i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
      return `${what}${path}: ${i.message}`;
    })
    .join('; ');
}
