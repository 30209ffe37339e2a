export { createRouter, type Router, type RouterOptions } from './router';
export { trustOrigins, sameOrigin, type SenderInfo, type SenderPolicy } from './sender';
