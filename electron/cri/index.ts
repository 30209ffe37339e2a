/** CRI over gRPC (issue #4): the runtime.v1 server over the engine, and the client + endpoint registry. */
export { startCriServer, DEFAULT_CRI_SOCKET, type CriServer, type CriServerOptions } from './server';
export { createCriEndpointApi, type CriEndpointApi } from './client';
export { createEndpointRegistry, type CriEndpointRegistry, type EndpointRegistryOptions } from './endpoint-registry';
export { grpcCodeFor, toGrpcStatus, fromGrpcError } from './errors';
export { benchCriSideBySide, type BenchOptions, type BenchResult } from './bench';
