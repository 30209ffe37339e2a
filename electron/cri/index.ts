/** CRI runtime.v1 over gRPC: the server over the engine, and the client other parts use to reach any CRI runtime. */
export { startCriServer, DEFAULT_CRI_SOCKET, type CriServer, type CriServerOptions } from './server';
export { createCriEndpointApi, type CriEndpointApi } from './client';
export { grpcCodeFor, toGrpcStatus, fromGrpcError } from './errors';
