/**
 * Port-forward sessions (kubelet's pkg/cri/streaming/portforward):
 * - SPDY `portforward.k8s.io`: per forwarded connection the client opens an error stream and a data stream, both with
 *   headers `port` and `requestID` (`streamType: error|data`); once both are there the data stream is piped to the
 *   pod's port, and a failure is written as text on the error stream. Without requestID, the pair is found from the
 *   stream ids (error = data - 2), as kubelet does for old clients.
 * - WebSocket: one data channel (2i) and one error channel (2i+1) per requested port; the server first writes the
 *   port, 2 bytes little-endian, on both channels of each pair.
 */
import { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import type { ContainerStreaming } from '../../engine/api';
import type { SpdyConnection, SpdyStream } from './spdy-connection';
import { WsChannels } from './channels';
import { HEADER_PORT, HEADER_REQUEST_ID, HEADER_STREAM_TYPE } from './protocol';

const PAIR_TIMEOUT_MS = 30_000;

export function servePortForwardSpdy(conn: SpdyConnection, streaming: ContainerStreaming, sandboxId: string): void {
  const pairs = new Map<string, { data?: SpdyStream; error?: SpdyStream; timer: NodeJS.Timeout }>();
  conn.on('stream', (stream) => {
    stream.on('error', () => undefined);
    const portText = stream.header(HEADER_PORT) ?? '';
    const type = stream.header(HEADER_STREAM_TYPE) ?? '';
    const port = Number(portText);
    if (!/^\d+$/.test(portText) || port < 1 || port > 65535 || (type !== 'data' && type !== 'error')) {
      // kubelet refuses the stream (it fails the handler, which resets it)
      stream.reset();
      return;
    }
    const requestId = stream.header(HEADER_REQUEST_ID) ?? String(type === 'error' ? stream.id : stream.id - 2);
    let pair = pairs.get(requestId);
    if (!pair) {
      const timer = setTimeout(() => {
        const p = pairs.get(requestId);
        pairs.delete(requestId);
        if (p?.error) p.error.end(`timed out waiting for streams of request ${requestId}`);
        p?.data?.reset();
      }, PAIR_TIMEOUT_MS);
      pair = { timer };
      pairs.set(requestId, pair);
    }
    if (pair[type]) {
      stream.end(`error processing stream for request ${requestId}: ${type} stream already assigned`);
      return;
    }
    pair[type] = stream;
    if (pair.data && pair.error) {
      clearTimeout(pair.timer);
      pairs.delete(requestId);
      const { data, error } = pair;
      void forward(streaming, sandboxId, port, data).then((failure) => {
        if (failure) error.end(failure);
        else error.end();
        if (!data.writableEnded) data.end();
      });
    }
  });
  conn.on('close', () => {
    for (const p of pairs.values()) clearTimeout(p.timer);
    pairs.clear();
  });
}

async function forward(streaming: ContainerStreaming, sandboxId: string, port: number, stream: Duplex): Promise<string | undefined> {
  try {
    await streaming.portForward({ sandboxId, port, stream });
    return undefined;
  } catch (e) {
    return `error forwarding port ${port} to pod ${sandboxId}: ${e instanceof Error ? e.message : String(e)}`;
  }
}

export async function servePortForwardWs(
  ws: WebSocket,
  protocol: string,
  streaming: ContainerStreaming,
  sandboxId: string,
  ports: number[],
): Promise<void> {
  const ch = new WsChannels(ws, protocol);
  ws.on('error', () => undefined);
  const sessions = ports.map(async (port, i) => {
    const dataChannel = 2 * i;
    const errorChannel = 2 * i + 1;
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16LE(port);
    await ch.send(dataChannel, prefix);
    await ch.send(errorChannel, prefix);
    const duplex = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        ch.send(dataChannel, chunk).then(() => cb(), cb);
      },
    });
    ch.on(dataChannel, (d) => duplex.push(d));
    ws.on('close', () => duplex.push(null));
    const failure = await forward(streaming, sandboxId, port, duplex);
    if (failure) await ch.send(errorChannel, Buffer.from(failure));
  });
  await Promise.all(sessions);
  if (ws.readyState === ws.OPEN) ws.close(1000);
}
