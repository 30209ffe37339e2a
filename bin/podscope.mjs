#!/usr/bin/env node
// `npx podscope …`: the CLI from source in a checkout, from the bundle in a production install (see load-cli.mjs).
import { ensureRendererBuilt, loadCliMain } from './load-cli.mjs';

const argv = process.argv.slice(2);
if (argv.includes('serve')) await ensureRendererBuilt();
const main = await loadCliMain();
process.exitCode = await main(argv);
