export { createRouter, type Router, type RouterOptions } from './router';
export { trustOrigins, originOf, type SenderInfo, type SenderPolicy } from './sender';
export { createLocalOnlyRegistry, localEndpointView } from './local-endpoints';
export { createUnavailableEngine } from './unavailable-engine';
