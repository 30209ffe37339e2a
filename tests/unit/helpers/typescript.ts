/**
 * The TypeScript compiler API for the tests that scan sources (comments, imports). Loaded with require, not import:
 * typescript.js is one 9 MB CommonJS file, and Node's ESM loader reads it twice more before running it (once to tell
 * CommonJS from ESM, once to find its named exports), which made `import ts from 'typescript'` cost about 1.2 CPU s
 * per test worker instead of 0.4.
 */
import { createRequire } from 'node:module';
import type * as TypeScript from 'typescript';

const ts: typeof TypeScript = createRequire(import.meta.url)('typescript');
export default ts;
