#!/usr/bin/env node
// Regenerates the typed CRI runtime.v1 bindings (electron/cri/generated/) from electron/cri/proto/runtime_v1.proto.
// buf compiles the proto itself (no protoc) and runs the local ts-proto plugin with the options in buf.gen.yaml.
// The output is committed so CI and users never need codegen; run this after editing the .proto.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const protoDir = join(root, 'electron/cri/proto');
const outDir = join(root, 'electron/cri/generated');
const plugin = join(root, 'node_modules/.bin/protoc-gen-ts_proto');
// buf is fetched on demand from the npm registry rather than being a devDependency: its per-platform optional
// packages are missing from npm's lockfile (npm/cli#4828), which makes `npm ci` refuse the lock.
const BUF = '@bufbuild/buf@1.75.0';

if (!existsSync(plugin)) {
  console.error(`gen-proto: ts-proto not found at ${plugin}; run npm ci`);
  process.exit(1);
}

// Start clean so a message or file removed from the proto does not linger in the generated code.
rmSync(outDir, { recursive: true, force: true });

const run = (args) => {
  const r = spawnSync('npx', ['--yes', '--package', BUF, 'buf', ...args], { cwd: protoDir, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`gen-proto: buf ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`);
    process.exit(r.status ?? 1);
  }
};
run(['lint']);
run(['generate']);
console.log(`gen-proto: wrote ${outDir}`);
