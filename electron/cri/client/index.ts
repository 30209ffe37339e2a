/** CRI client side: SandboxApi over any runtime.v1 endpoint. */
export { createCriEndpointApi, type CriEndpointApi } from './cri-endpoint-api';
export { connectCri, normalizeAddress, type CriConnection, type CriConnectionOptions } from './connection';
export { decodeSandboxStatus } from './decode-status';
export { criStreaming } from './cri-streaming';
