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
const buf = join(root, 'node_modules/.bin/buf');
const plugin = join(root, 'node_modules/.bin/protoc-gen-ts_proto');

for (const [what, path] of [['buf (npm @bufbuild/buf)', buf], ['ts-proto (npm ts-proto)', plugin]]) {
  if (!existsSync(path)) {
    console.error(`gen-proto: ${what} not found at ${path}; run npm install`);
    process.exit(1);
  }
}

// Start clean so a message or file removed from the proto does not linger in the generated code.
rmSync(outDir, { recursive: true, force: true });

const run = (args) => {
  const r = spawnSync(buf, args, { cwd: protoDir, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`gen-proto: buf ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`);
    process.exit(r.status ?? 1);
  }
};
run(['lint']);
run(['generate']);
console.log(`gen-proto: wrote ${outDir}`);
