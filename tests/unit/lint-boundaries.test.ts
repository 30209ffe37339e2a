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

  it('an import of the public surface passes', async () => {
    expect(
      await lint(
        'electron/cli/zz.ts',
        "import { createEngine, imageViewOf, type ContainerStreaming } from '../engine/api';\nexport const c = [createEngine, imageViewOf];\nexport type S = ContainerStreaming;\n",
      ),
    ).toEqual([]);
  });

  it('the engine itself may import its own folders', async () => {
    expect(
      await lint('electron/engine/pods/zz.ts', "import { LocalImageStore } from '../images/store';\nexport const s = LocalImageStore;\n"),
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
