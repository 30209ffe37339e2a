/**
 * The layer rules of eslint.config.js fire where docs/architecture.md says they do. `npm run lint` checks the tree;
 * this checks the checker, with the real config, on files that break each rule (nothing is written to disk).
 */
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

async function ruleHits(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${path}` });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('layer rules', () => {
  it('an engine file may not import electron', async () => {
    expect(await ruleHits('electron/engine/pods/zz.ts', "import { app } from 'electron';\nexport const a = app;\n")).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*only electron\/main and electron\/preload/),
    ]);
  });

  it('an engine file may not import a front door', async () => {
    const hits = await ruleHits(
      'electron/engine/pods/zz.ts',
      "import { createRouter } from '../../ipc/router';\nexport const r = createRouter;\n",
    );
    expect(hits).toEqual([expect.stringMatching(/^import-x\/no-restricted-paths: .*the engine must not import a front door/)]);
  });

  it('the renderer may not import from electron/', async () => {
    const hits = await ruleHits(
      'renderer/src/lib/zz.ts',
      "import { createEngine } from '../../../electron/engine/index';\nexport const c = createEngine;\n",
    );
    expect(hits).toEqual([expect.stringMatching(/^import-x\/no-restricted-paths: .*typed channel map/)]);
  });

  it('a feature may not import another feature', async () => {
    const hits = await ruleHits(
      'renderer/src/features/cni/zz.ts',
      "import { podsQuery } from '../pods/api/queries';\nexport const q = podsQuery;\n",
    );
    expect(hits).toEqual([expect.stringMatching(/^import-x\/no-restricted-paths: .*feature "cni" must not import another feature/)]);
  });

  it('lib may not import a feature, and features may not import the app shell', async () => {
    expect(
      await ruleHits('renderer/src/lib/zz.ts', "import { podsQuery } from '../features/pods/api/queries';\nexport const q = podsQuery;\n"),
    ).toEqual([expect.stringMatching(/lib\/ is below the features/)]);
    expect(await ruleHits('renderer/src/features/pods/zz.ts', "import { App } from '../../app/App';\nexport const a = App;\n")).toEqual([
      expect.stringMatching(/features do not import the app shell/),
    ]);
  });

  it('shared/ may use neither Node nor the other layers', async () => {
    const hits = await ruleHits(
      'shared/domain/zz.ts',
      "import { readFileSync } from 'node:fs';\nimport { createEngine } from '../../electron/engine/index';\nexport const x = [readFileSync, createEngine];\n",
    );
    expect(hits).toEqual([expect.stringMatching(/no Node built-ins/), expect.stringMatching(/shared\/ imports only shared\//)]);
  });

  it('product code may not import tests or the test kit', async () => {
    // (the import specifiers below are relative to the virtual file's path)
    const hits = await ruleHits('electron/cli/zz.ts', "import { tempDir } from '../../testkit/temp-dir';\nexport const e = tempDir;\n");
    expect(hits).toContainEqual(expect.stringMatching(/product code must not import tests/));
  });

  it('an import that does not resolve is an error (so no import escapes the boundary rules)', async () => {
    expect(await ruleHits('electron/engine/zz.ts', "import { x } from './nowhere';\nexport const y = x;\n")).toEqual([
      expect.stringMatching(/^import-x\/no-unresolved/),
    ]);
  });
});
