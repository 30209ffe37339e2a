/**
 * The boundaries around the engine's public surface, checked with the real eslint.config.js through ESLint's Node
 * API: synthetic code is linted as if it sat at a real path (nothing is written to disk), and each forbidden import
 * must fail with its zone's message while the allowed one passes.
 */
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

async function lint(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${path}` });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

const SURFACE_MESSAGE =
  /^import-x\/no-restricted-paths: .*a front door imports the engine only through its public surface, electron\/engine\/api\.ts/;

describe('engine surface and product boundaries', () => {
  it('an electron/ file may not import the renderer', async () => {
    const hits = await lint(
      'electron/ipc/zz.ts',
      "import { formatBytes } from '../../renderer/src/lib/format';\nexport const f = formatBytes;\n",
    );
    expect(hits).toEqual([expect.stringMatching(/^import-x\/no-restricted-paths: .*electron\/ must not import renderer\//)]);
  });

  it('a front door may not deep-import an engine internal', async () => {
    const hits = await lint(
      'electron/cli/zz.ts',
      "import { SandboxEngine } from '../engine/service/engine';\nexport const s = SandboxEngine;\n",
    );
    expect(hits).toEqual([expect.stringMatching(SURFACE_MESSAGE)]);
  });

  it('the engine builder (index.ts) is an internal too: doors reach createEngine through the surface', async () => {
    const hits = await lint('electron/core/zz.ts', "import { createEngine } from '../engine/index';\nexport const c = createEngine;\n");
    expect(hits).toEqual([expect.stringMatching(SURFACE_MESSAGE)]);
  });

  it('every front door is held to the surface (cri, ipc, endpoints, host, main)', async () => {
    for (const door of ['cri/server', 'ipc', 'endpoints', 'host', 'main']) {
      const up = '../'.repeat(door.split('/').length);
      const hits = await lint(
        `electron/${door}/zz.ts`,
        `import type { ImageStore } from '${up}engine/images/types';\nexport type I = ImageStore;\n`,
      );
      expect(hits, door).toEqual([expect.stringMatching(SURFACE_MESSAGE)]);
    }
  });

  it('a renderer store is made with createUiStore, never with zustand create (tests reset the stores they know)', async () => {
    const code = "import { create } from 'zustand';\nexport const useX = create(() => ({ n: 0 }));\n";
    expect(await lint('renderer/src/features/pods/zz.ts', code)).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*createUiStore/),
    ]);
    expect(await lint('renderer/src/lib/ui-store.ts', code)).toEqual([]);
  });

  it('an import of the public surface passes', async () => {
    expect(
      await lint(
        'electron/cli/zz.ts',
        "import { createEngine, imageViewOf, type ContainerStreaming } from '../engine/api';\nexport const c = [createEngine, imageViewOf];\nexport type S = ContainerStreaming;\n",
      ),
    ).toEqual([]);
  });

  it('the engine itself may import its own folders: service/ composes the features', async () => {
    expect(
      await lint(
        'electron/engine/service/zz.ts',
        "import { LocalImageStore } from '../images/store';\nexport const s = LocalImageStore;\n",
      ),
    ).toEqual([]);
  });

  it('product code may not import a test double from the test kit', async () => {
    const hits = await lint(
      'electron/engine/pods/zz.ts',
      "import { tempDir } from '../../../testkit/temp-dir';\nexport const t = tempDir;\n",
    );
    expect(hits).toEqual([
      expect.stringMatching(/^import-x\/no-restricted-paths: .*product code must not import tests, e2e, bench or the test kit/),
    ]);
  });

  it('product code may not import a touch-point fake (testkit/fakes)', async () => {
    const hits = await lint(
      'electron/engine/pods/zz.ts',
      "import { FakeNetnsManager } from '../../../testkit/fakes/fake-netns';\nexport const f = FakeNetnsManager;\n",
    );
    expect(hits).toEqual([
      expect.stringMatching(/^import-x\/no-restricted-paths: .*product code must not import tests, e2e, bench or the test kit/),
    ]);
  });
});

/** the engine's floor plan (docs/architecture.md#the-engines-folders), each rule broken by a synthetic file */
describe('the engine floor plan', () => {
  const zone = (text: string) => expect.stringMatching(new RegExp(`^import-x/no-restricted-paths: .*${text}`));

  it('a feature may not import another feature', async () => {
    const hits = await lint('electron/engine/probe/zz.ts', "import { buildTrace } from '../trace/steps';\nexport const b = buildTrace;\n");
    expect(hits).toEqual([zone('engine feature "probe" must not import another feature or service/')]);
  });

  it('every feature is held to it (pods, containers, images, lab, topology, throughput, trace)', async () => {
    for (const [f, other] of [
      ['pods', 'probe/probe'],
      ['containers', 'pods/store'],
      ['images', 'containers/store'],
      ['lab', 'probe/judge'],
      ['topology', 'throughput/measure'],
      ['throughput', 'pods/live'],
      ['trace', 'probe/plan'],
    ] as const) {
      const hits = await lint(`electron/engine/${f}/zz.ts`, `import * as m from '../${other}';\nexport const x = m;\n`);
      expect(hits, f).toEqual([zone(`engine feature "${f}" must not import another feature or service/`)]);
    }
  });

  it('a feature may not import the composition root (service/) or the engine builder', async () => {
    const hits = await lint(
      'electron/engine/pods/zz.ts',
      "import { SandboxEngine } from '../service/engine';\nexport const s = SandboxEngine;\n",
    );
    expect(hits).toEqual([zone('engine feature "pods" must not import another feature or service/')]);
    const built = await lint(
      'electron/engine/topology/zz.ts',
      "import { createEngine } from '../index';\nexport const c = createEngine;\n",
    );
    expect(built).toEqual([zone('engine feature "topology" must not import another feature or service/')]);
  });

  it('a touch point may not import a feature', async () => {
    for (const t of ['cni', 'kernel', 'netns', 'os', 'runtime']) {
      const hits = await lint(
        `electron/engine/${t}/zz.ts`,
        "import type { SandboxRecord } from '../pods/record';\nexport type R = SandboxRecord;\n",
      );
      expect(hits, t).toEqual([zone('an engine touch point \\(cni, kernel, netns, os, runtime\\) must not import a feature or service/')]);
    }
  });

  it('common/ may not import a touch point or a feature', async () => {
    const hits = await lint(
      'electron/engine/common/zz.ts',
      "import type { ProcessRunner } from '../os/exec';\nexport type P = ProcessRunner;\n",
    );
    expect(hits).toEqual([zone('engine common/ is the bottom: it imports only shared/')]);
  });

  it('a feature may import touch points and common/, and service/ may import features', async () => {
    expect(
      await lint(
        'electron/engine/probe/zz.ts',
        "import { LinuxKernelReader } from '../kernel/linux-reader';\nimport { podNotFound } from '../common/pod-facts';\nexport const k = [LinuxKernelReader, podNotFound];\n",
      ),
    ).toEqual([]);
    expect(
      await lint('electron/engine/service/zz.ts', "import { probeSandbox } from '../probe/probe';\nexport const p = probeSandbox;\n"),
    ).toEqual([]);
  });

  it('a test may not build SandboxEngine by hand (testkit/fakes/test-engine.ts builds it)', async () => {
    const code =
      "import { SandboxEngine } from '../../electron/engine/service/engine';\nexport const e = (d: never) => new SandboxEngine(d);\n";
    for (const path of ['tests/unit/zz.test.ts', 'tests/cri/zz.test.ts', 'e2e/zz.ts', 'bench/zz.ts']) {
      const hits = await lint(path, path.startsWith('tests/') ? code : code.replace("'../../", "'../"));
      expect(hits, path).toEqual([expect.stringMatching(/^no-restricted-syntax: build the engine with testkit\/fakes\/test-engine\.ts/)]);
    }
  });
});
