/**
 * Image references as Docker and containerd normalize them (distribution/reference's ParseNormalizedNamed):
 * `busybox` ⇒ `docker.io/library/busybox:latest`, `user/app` ⇒ `docker.io/user/app:latest`; the first component is
 * a registry host when it has a `.` or `:` or is `localhost`. A digest (`name@sha256:…`) pins the manifest.
 */
import { PodscopeError } from '../../../shared/domain/errors';

export interface ImageReference {
  /** registry host as written (`docker.io`, `127.0.0.1:5000`) */
  registry: string;
  /** repository path inside the registry (`library/busybox`) */
  repository: string;
  tag?: string;
  digest?: string;
  /** `<registry>/<repository>` */
  name: string;
  /** `<name>:<tag>` (tag defaults to latest unless a digest is given) or `<name>@<digest>` */
  canonical: string;
}

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const HOST = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::\d+)?$/;

export function parseReference(ref: string): ImageReference {
  const bad = (why: string) =>
    new PodscopeError('InvalidArgument', `image reference ${JSON.stringify(ref)}: ${why}`, { details: { field: 'image', ref } });
  if (!ref || ref.length > 4096) throw bad('empty or too long');
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw bad(`digest ${JSON.stringify(digest)} is not sha256:<64 lowercase hex>`);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`tag ${JSON.stringify(tag)} is not valid`);
  }
  const slash = rest.indexOf('/');
  let registry = 'docker.io';
  let repository = rest;
  if (slash >= 0) {
    const first = rest.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost' || first.startsWith('[')) {
      registry = first;
      repository = rest.slice(slash + 1);
      if (!HOST.test(registry)) throw bad(`registry host ${JSON.stringify(registry)} is not valid`);
    }
  }
  if (registry === 'index.docker.io' || registry === 'registry-1.docker.io') registry = 'docker.io';
  if (registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  if (!repository) throw bad('repository name is empty');
  for (const c of repository.split('/'))
    if (!COMPONENT.test(c)) throw bad(`repository component ${JSON.stringify(c)} must be lowercase letters, digits and separators`);
  if (!tag && !digest) tag = 'latest';
  const name = `${registry}/${repository}`;
  return { registry, repository, tag, digest, name, canonical: digest ? `${name}@${digest}` : `${name}:${tag}` };
}

/** A reference, or undefined when it does not parse (for lookups that also accept ids). */
export function tryParseReference(ref: string): ImageReference | undefined {
  try {
    return parseReference(ref);
  } catch {
    return undefined;
  }
}

/** The host to talk to for a registry name (Docker Hub's API is not served at docker.io). */
export function registryEndpointHost(registry: string): string {
  return registry === 'docker.io' ? 'registry-1.docker.io' : registry;
}

/** localhost / loopback registries are plain HTTP unless configured otherwise, as Docker and containerd treat them. */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.startsWith('[') ? registry.slice(1, registry.indexOf(']')) : registry.replace(/:\d+$/, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
