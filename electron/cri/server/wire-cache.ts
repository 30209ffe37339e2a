/**
 * Response serialisers for the read RPCs that reuse the bytes of what did not change. The adapters hand out the
 * same PodSandbox / PodSandboxStatus / Container objects until a sandbox or container changes (sandbox-list.ts,
 * sandbox-status.ts, container-list.ts),
 * so each is encoded once per saved version and a response is those bytes with a field header in front. At 1,000
 * pods this turns ListPodSandbox's encoding (ts-proto's writer, ~6 µs per pod) into one copy. The bytes are the
 * same as the generated encoder's: fields in field-number order, each embedded message as tag + length + bytes
 * (checked in tests/unit/cri-wire-cache.test.ts).
 */
import type { BinaryWriter } from '@bufbuild/protobuf/wire';
import {
  Container,
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

/** A repeated field 1 of cached messages: ListPodSandboxResponse.items and ListContainersResponse.containers. */
function serializeRepeatedField1<T extends object>(items: T[], encode: (m: T) => BinaryWriter): Buffer {
  const parts = items.map((item) => bytesOf(item, encode));
  let total = 0;
  const heads = parts.map((p) => {
    const h = lengthPrefix(p.length);
    total += h.length + p.length;
    return h;
  });
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  for (let i = 0; i < parts.length; i++) {
    for (const byte of heads[i]!) out[pos++] = byte;
    out.set(parts[i]!, pos);
    pos += parts[i]!.length;
  }
  return out;
}

export function serializeListPodSandboxResponse(res: ListPodSandboxResponse): Buffer {
  return serializeRepeatedField1(res.items, (m) => PodSandbox.encode(m));
}

export function serializeListContainersResponse(res: ListContainersResponse): Buffer {
  return serializeRepeatedField1(res.containers, (m) => Container.encode(m));
}

export function serializePodSandboxStatusResponse(res: PodSandboxStatusResponse): Buffer {
  // info and timestamp change per call (and info is small unless verbose): the generated encoder writes them
  const rest = PodSandboxStatusResponse.encode({ ...res, status: undefined }).finish();
  if (!res.status) return Buffer.from(rest);
  const status = bytesOf(res.status, (m) => PodSandboxStatus.encode(m));
  const head = lengthPrefix(status.length);
  const out = Buffer.allocUnsafe(head.length + status.length + rest.length);
  out.set(head, 0);
  out.set(status, head.length);
  out.set(rest, head.length + status.length);
  return out;
}

/** The runtime service with the read responses serialised through the caches above; every other method as generated. */
export const CachedRuntimeService = {
  ...RuntimeServiceService,
  listPodSandbox: { ...RuntimeServiceService.listPodSandbox, responseSerialize: serializeListPodSandboxResponse },
  podSandboxStatus: { ...RuntimeServiceService.podSandboxStatus, responseSerialize: serializePodSandboxStatusResponse },
  listContainers: { ...RuntimeServiceService.listContainers, responseSerialize: serializeListContainersResponse },
} as const satisfies typeof RuntimeServiceService;
