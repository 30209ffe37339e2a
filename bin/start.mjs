#!/usr/bin/env node
// Until the desktop shell lands: browser mode through the CLI (`podscope serve`).
import { spawn } from 'node:child_process';
const child = spawn(process.execPath, [new URL('./podscope.mjs', import.meta.url).pathname, 'serve', ...process.argv.slice(2)], { stdio: 'inherit' });
child.on('exit', (code) => process.exit(code ?? 1));
