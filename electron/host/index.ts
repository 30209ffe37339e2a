export { startBrowserHost, type BrowserHost, type BrowserHostOptions } from './browser-host';
