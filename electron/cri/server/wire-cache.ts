/**
 * Response serialisers for the read RPCs that reuse the bytes of what did not change. The adapters hand out the
 * same PodSandbox / PodSandboxStatus / Container objects until a sandbox or container changes (sandbox-list.ts,
 * sandbox-status.ts, container-list.ts),
 * so each is encoded once per saved version and a response is those bytes with a field header in front. At 1,000
 * pods this turns ListPodSandbox's encoding (ts-proto's writer, ~6 µs per pod) into one copy, and a list that
 * returns the very objects of the last one into none. The bytes are the
 * same as the generated encoder's: fields in field-number order, each embedded message as tag + length + bytes
 * (checked in tests/unit/cri-wire-cache.test.ts).
 */
import type { BinaryWriter } from '@bufbuild/protobuf/wire';
import {
  Container,
  ContainerStatus,
  ContainerStatusResponse,
  PodSandbox,
  PodSandboxStatus,
  PodSandboxStatusResponse,
  RuntimeServiceService,
  type ListContainersResponse,
  type ListPodSandboxResponse,
} from '../generated/runtime_v1';

const encoded = new WeakMap<object, Uint8Array>();

function bytesOf<T extends object>(msg: T, encode: (m: T) => BinaryWriter): Uint8Array {
  let b = encoded.get(msg);
  if (!b) encoded.set(msg, (b = encode(msg).finish()));
  return b;
}

/** field 1, wire type 2 (length-delimited): tag byte 0x0a, then the length as a varint */
function lengthPrefix(len: number): number[] {
  const out = [0x0a];
  while (len > 0x7f) {
    out.push((len & 0x7f) | 0x80);
    len >>>= 7;
  }
  out.push(len);
  return out;
}

/** Each list item as an entry of a field-1 repeated field (tag, length, message), built once per item object. */
const entries = new WeakMap<object, Uint8Array>();

function entryOf<T extends object>(msg: T, encode: (m: T) => BinaryWriter): Uint8Array {
  let b = entries.get(msg);
  if (!b) {
    const body = encode(msg).finish();
    const head = lengthPrefix(body.length);
    b = new Uint8Array(head.length + body.length);
    b.set(head, 0);
    b.set(body, head.length);
    entries.set(msg, b);
  }
  return b;
}

/**
 * A repeated field 1 of cached messages: ListPodSandboxResponse.items and ListContainersResponse.containers. The
 * last reply is kept with the item objects it was built from: the same objects in the same order are the same
 * bytes (an item object is never changed once handed out; a changed pod or container is a new object), so an
 * unfiltered list of 1,000 unchanged pods costs 1,000 identity checks and no copy or allocation here.
 */
class RepeatedField1Serializer<T extends object> {
  private lastItems: readonly T[] = [];
  private lastBytes: Buffer | undefined;

  constructor(private readonly encode: (m: T) => BinaryWriter) {}

  serialize(items: readonly T[]): Buffer {
    if (this.lastBytes && sameItems(items, this.lastItems)) return this.lastBytes;
    const parts = items.map((item) => entryOf(item, this.encode));
    const bytes = Buffer.concat(parts);
    this.lastItems = items;
    this.lastBytes = bytes;
    return bytes;
  }
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const podSandboxes = new RepeatedField1Serializer<PodSandbox>((m) => PodSandbox.encode(m));
const containers = new RepeatedField1Serializer<Container>((m) => Container.encode(m));

export function serializeListPodSandboxResponse(res: ListPodSandboxResponse): Buffer {
  return podSandboxes.serialize(res.items);
}

export function serializeListContainersResponse(res: ListContainersResponse): Buffer {
  return containers.serialize(res.containers);
}

/**
 * The info map's bytes (field 2) of the last reply per status object. A verbose reply's info is a JSON document of a
 * few KB built once per saved version (sandbox-status.ts), and UTF-8 encoding it on every call made a verbose
 * Status cost a fifth more than a plain one on the real engine (bench/cri-reads.ts); the same strings for the same
 * status object are the same bytes. A plain reply's info is empty and encodes to nothing.
 */
const infoBytes = new WeakMap<object, { info: Record<string, string>; bytes: Uint8Array }>();

function sameInfo(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  // the same string object compares by reference first, so a cached verbose document is no character-wise compare
  for (const k of keys) if (a[k] !== b[k]) return false;
  return true;
}

function encodedInfo(status: object | undefined, info: Record<string, string>, encode: () => Uint8Array): Uint8Array {
  if (Object.keys(info).length === 0) return new Uint8Array(0);
  if (!status) return encode();
  const hit = infoBytes.get(status);
  if (hit && sameInfo(hit.info, info)) return hit.bytes;
  const bytes = encode();
  infoBytes.set(status, { info, bytes });
  return bytes;
}

/**
 * A status response: its status (field 1) as the cached bytes of that status object, its info (field 2) as the
 * cached bytes of that info for that status object, then whatever else changes per call (a timestamp) as the
 * generated encoder writes it with status and info left out — the generated encoder's field order.
 */
function statusFirst<S extends object>(
  status: S | undefined,
  encodeStatus: (m: S) => BinaryWriter,
  info: Uint8Array,
  rest: Uint8Array,
): Buffer {
  const body = status ? bytesOf(status, encodeStatus) : undefined;
  const head = body ? lengthPrefix(body.length) : [];
  const out = Buffer.allocUnsafe(head.length + (body?.length ?? 0) + info.length + rest.length);
  let at = 0;
  out.set(head, at);
  at += head.length;
  if (body) out.set(body, at);
  at += body?.length ?? 0;
  out.set(info, at);
  out.set(rest, at + info.length);
  return out;
}

export function serializePodSandboxStatusResponse(res: PodSandboxStatusResponse): Buffer {
  return statusFirst(
    res.status,
    (m) => PodSandboxStatus.encode(m),
    encodedInfo(res.status, res.info, () =>
      PodSandboxStatusResponse.encode({ status: undefined, info: res.info, timestamp: '0' }).finish(),
    ),
    PodSandboxStatusResponse.encode({ ...res, status: undefined, info: {} }).finish(),
  );
}

export function serializeContainerStatusResponse(res: ContainerStatusResponse): Buffer {
  return statusFirst(
    res.status,
    (m) => ContainerStatus.encode(m),
    encodedInfo(res.status, res.info, () => ContainerStatusResponse.encode({ status: undefined, info: res.info }).finish()),
    ContainerStatusResponse.encode({ ...res, status: undefined, info: {} }).finish(),
  );
}

/** The runtime service with the read responses serialised through the caches above; every other method as generated. */
export const CachedRuntimeService = {
  ...RuntimeServiceService,
  listPodSandbox: { ...RuntimeServiceService.listPodSandbox, responseSerialize: serializeListPodSandboxResponse },
  podSandboxStatus: { ...RuntimeServiceService.podSandboxStatus, responseSerialize: serializePodSandboxStatusResponse },
  listContainers: { ...RuntimeServiceService.listContainers, responseSerialize: serializeListContainersResponse },
  containerStatus: { ...RuntimeServiceService.containerStatus, responseSerialize: serializeContainerStatusResponse },
} as const satisfies typeof RuntimeServiceService;
