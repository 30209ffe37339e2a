/** Where sandboxes live: the built-in engine ("local") and the CRI endpoints the user added. */
export { createEndpointRegistry, localEndpointView, type CriEndpointRegistry, type EndpointRegistryOptions } from './registry';
export { criImages, localImages, type EndpointImages, type ImageStatus } from './images';
