/**
 * The floor of a list reply for cri-floor.ts: a bare grpc-js server on a unix socket whose ListPodSandbox and
 * ListContainers hand grpc-js bytes encoded beforehand (the exact bytes Podscope's server replied with), so a call
 * costs only grpc-js, HTTP/2 and the socket on this side. No implementation in this process model can answer the
 * same reply cheaper. Version answers as Podscope's does, for the ratio on the same connection.
 * `--shim` accepts connections through the authority shim as `podscope cri` does (a JS stream between the socket and
 * HTTP/2); without it grpc-js binds the socket itself.
 * `tsx bench/raw-grpc-server.ts <socket> <dir with ListPodSandbox.bin, ListContainers.bin> [--shim]`; prints "ready".
 */
import { readFile } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { Server, ServerCredentials, type sendUnaryData } from '@grpc/grpc-js';
import { RuntimeServiceService } from '../electron/cri/generated/runtime_v1';
import { authorityFixingStream } from '../electron/cri/server/authority-shim';
import { versionResponse } from '../electron/cri/server/version';

async function main(): Promise<void> {
  const [socketPath, dir] = process.argv.slice(2);
  if (!socketPath || !dir) throw new Error('usage: raw-grpc-server.ts <socket> <dir> [--shim]');
  const sandboxes = await readFile(join(dir, 'ListPodSandbox.bin'));
  const containers = await readFile(join(dir, 'ListContainers.bin'));
  const asIs = (b: Buffer) => b;
  const service = {
    version: RuntimeServiceService.version,
    listPodSandbox: { ...RuntimeServiceService.listPodSandbox, responseSerialize: asIs },
    listContainers: { ...RuntimeServiceService.listContainers, responseSerialize: asIs },
  };
  const version = versionResponse('fakes');
  const server = new Server();
  server.addService(service, {
    version: (_call: unknown, cb: sendUnaryData<unknown>) => cb(null, version),
    listPodSandbox: (_call: unknown, cb: sendUnaryData<Buffer>) => cb(null, sandboxes),
    listContainers: (_call: unknown, cb: sendUnaryData<Buffer>) => cb(null, containers),
  });
  if (process.argv.includes('--shim')) {
    const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
    const listener = createNetServer((socket) => injector.injectConnection(authorityFixingStream(socket)));
    await new Promise<void>((resolve) => listener.listen(socketPath, resolve));
  } else {
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${socketPath}`, ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
    );
  }
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  server.forceShutdown();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`raw-grpc-server: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
