/** This machine as an OCI platform, and the pick of one manifest out of an index (containerd's platforms.Default()). */
import { PodscopeError } from '../../../shared/domain/errors';
import type { Descriptor } from '../../../shared/domain/image-spec';

const ARCH: Record<string, string> = {
  x64: 'amd64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: '386',
  ppc64: 'ppc64le',
  s390x: 's390x',
  riscv64: 'riscv64',
  mips64el: 'mips64le',
};

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

export function hostPlatform(): Platform {
  const architecture = ARCH[process.arch] ?? process.arch;
  return {
    os: 'linux',
    architecture,
    ...(architecture === 'arm64' && { variant: 'v8' }),
    ...(architecture === 'arm' && { variant: 'v7' }),
  };
}

const fmt = (p: { os?: string; architecture?: string; variant?: string }) =>
  `${p.os ?? '?'}/${p.architecture ?? '?'}${p.variant ? `/${p.variant}` : ''}`;

/**
 * The index entry for `want`: same os and architecture; among those an exact variant first, then one without a
 * variant (arm64's v8 is the default and often omitted). Entries without a platform (attestations, etc.) never match.
 */
export function pickManifest(manifests: Descriptor[], want: Platform = hostPlatform()): Descriptor {
  const same = manifests.filter((m) => m.platform && m.platform.os === want.os && m.platform.architecture === want.architecture);
  const exact = same.find((m) => (m.platform!.variant ?? '') === (want.variant ?? ''));
  const loose = same.find((m) => !m.platform!.variant || !want.variant);
  const hit = exact ?? loose ?? (want.architecture === 'arm64' ? same[0] : undefined);
  if (!hit) {
    const has = manifests.map((m) => (m.platform ? fmt(m.platform) : 'no platform')).join(', ');
    throw new PodscopeError('NotFound', `no manifest for platform ${fmt(want)} in the index (it has: ${has || 'nothing'})`, {
      details: { field: 'manifests[].platform', want },
    });
  }
  return hit;
}
