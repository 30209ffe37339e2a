/** The `podscope` executable: bin/podscope.mjs loads this (from source in a checkout, bundled in a build). */
import { main } from './main';

process.exitCode = await main(process.argv.slice(2));
