#!/usr/bin/env node
// `podscope …`: a checkout's CLI from its own build of its sources (kept current, see cli-cache.mjs), a production
// install's from the bundle in dist/cli (see load-cli.mjs).
import { ensureRendererBuilt, loadCliMain } from './load-cli.mjs';

const argv = process.argv.slice(2);
if (argv.includes('serve')) await ensureRendererBuilt();
const main = await loadCliMain();
process.exitCode = await main(argv);
