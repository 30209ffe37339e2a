/**
 * Wire forms shared by both transports. Electron's invoke/handle and the WebSocket both carry a Reply: a result or
 * a SerializedError ({code, message, details}). Errors are returned, not thrown, because Electron rewrites thrown
 * errors into a plain message string and loses the code.
 */
import type { SerializedError } from '../domain/errors';
import type { PushedEvent } from './events';

export type Reply = { ok: true; result: unknown } | { ok: false; error: SerializedError };

/** WebSocket frames. */
export type ClientFrame = { t: 'req'; id: number; channel: string; payload: unknown };
export type ServerFrame = { t: 'res'; id: number; reply: Reply } | { t: 'event'; event: PushedEvent } | { t: 'hello'; version: string };

/** The query parameter and cookie that carry the browser-mode token. */
export const TOKEN_PARAM = 'token';
export const TOKEN_COOKIE = 'podscope_token';
export const WS_PATH = '/ipc';
