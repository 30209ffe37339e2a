#!/usr/bin/env node
// Runs the TypeScript CLI straight from the repo through tsx's loader, so `npx podscope …` needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../electron/cli/main.ts');
