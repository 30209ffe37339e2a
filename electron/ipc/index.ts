export { createRouter, type Router, type RouterOptions } from './router';
export { trustOrigins, sameOrigin, type SenderInfo, type SenderPolicy } from './sender';
export { createLocalOnlyRegistry, localEndpointView } from './local-endpoints';
export { createUnavailableEngine } from './unavailable-engine';
