// @ts-check
/**
 * The layers, checked (docs/architecture.md draws them). `npm run lint` runs this and Prettier; `npm test` runs lint.
 * Every boundary is a resolved-path rule (import-x/no-restricted-paths) rather than a text pattern, and
 * import-x/no-unresolved makes sure no import escapes the check by failing to resolve.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { importX } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const ROOT = fileURLToPath(new URL('.', import.meta.url));
const FEATURES = readdirSync(new URL('./renderer/src/features', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

/** Test and tool code: may import anything, never imported by the product. */
const TOOLS = ['tests', 'e2e', 'bench', 'testkit'];
const ENGINE_SIBLINGS = ['ipc', 'main', 'preload', 'host', 'cri', 'cli', 'endpoints', 'core'];
/** The engine's public surface: the one engine module the front doors may import. */
const ENGINE_SURFACE = 'electron/engine/api.ts';

/** @type {Array<{target: string | string[], from: string | string[], except?: string[], message: string}>} */
const zones = [
  // the engine is plain Node: it serves every front door and knows none of them
  {
    target: './electron/engine',
    from: ENGINE_SIBLINGS.map((d) => `./electron/${d}`),
    message: 'the engine must not import a front door (ipc/main/preload/host/cri/cli/endpoints/core)',
  },
  // the front doors reach the engine through its public surface only, never its internals
  {
    target: ENGINE_SIBLINGS.map((d) => `./electron/${d}`),
    from: './electron/engine',
    except: ['./api.ts'],
    message: `a front door imports the engine only through its public surface, ${ENGINE_SURFACE}`,
  },
  // the main process never depends on the page's code; what both need lives in shared/
  { target: './electron', from: './renderer', message: 'electron/ must not import renderer/: move what both need to shared/' },
  // cri/ is only CRI (server and client): the app's endpoints and composition sit above it
  {
    target: './electron/cri',
    from: ['./electron/endpoints', './electron/core', './electron/ipc', './electron/host', './electron/main', './electron/cli'],
    message: 'cri/ holds only CRI',
  },
  {
    target: './electron/endpoints',
    from: ['./electron/core', './electron/ipc', './electron/host', './electron/main', './electron/cli'],
    message: 'endpoints/ sits below the doors',
  },
  {
    target: './electron/ipc',
    from: ['./electron/core', './electron/host', './electron/main', './electron/cli'],
    message: 'the router knows no door',
  },
  // shared/ is the contract: neither side's code
  { target: './shared', from: ['./electron', './renderer', ...TOOLS.map((t) => `./${t}`)], message: 'shared/ imports only shared/' },
  // the renderer talks to the engine only through shared/ipc
  { target: './renderer', from: './electron', message: 'the renderer reaches the engine only through the typed channel map in shared/ipc' },
  // one way: app -> features -> lib -> shared
  {
    target: './renderer/src/lib',
    from: ['./renderer/src/features', './renderer/src/app'],
    message: 'lib/ is below the features and the app shell',
  },
  {
    target: './renderer/src/features',
    from: './renderer/src/app',
    message: 'features do not import the app shell; navigate through lib/navigation',
  },
  ...FEATURES.map((f) => ({
    target: `./renderer/src/features/${f}`,
    from: './renderer/src/features',
    except: [`./${f}`],
    message: `feature "${f}" must not import another feature; move what both need to lib/ or shared/`,
  })),
  // the product never depends on tests, benchmarks or the test kit (the fakes live in testkit/fakes)
  {
    target: ['./electron', './renderer', './shared', './bin'],
    from: TOOLS.map((t) => `./${t}`),
    message: 'product code must not import tests, e2e, bench or the test kit',
  },
];

/**
 * The engine's floor plan (docs/architecture.md#the-engines-folders): service/ composes; the features never import
 * one another nor service/ (each declares its deps, service/ fills them); the OS touch points and common/ import no
 * feature; common/ is the bottom.
 */
const ENGINE = './electron/engine';
const ENGINE_FEATURES = ['pods', 'containers', 'images', 'lab', 'probe', 'trace', 'topology', 'throughput', 'foreign'];
const ENGINE_TOUCH_POINTS = ['cni', 'kernel', 'netns', 'os', 'runtime'];
const ENGINE_TOP = [`${ENGINE}/service`, `${ENGINE}/api.ts`, `${ENGINE}/index.ts`];
const engineZones = [
  ...ENGINE_FEATURES.map((f) => ({
    target: `${ENGINE}/${f}`,
    from: [...ENGINE_FEATURES.filter((g) => g !== f).map((g) => `${ENGINE}/${g}`), ...ENGINE_TOP],
    message: `engine feature "${f}" must not import another feature or service/: declare what it needs in ${f}/ and let service/ fill it`,
  })),
  {
    target: ENGINE_TOUCH_POINTS.map((t) => `${ENGINE}/${t}`),
    from: [...ENGINE_FEATURES.map((f) => `${ENGINE}/${f}`), ...ENGINE_TOP],
    message: 'an engine touch point (cni, kernel, netns, os, runtime) must not import a feature or service/',
  },
  {
    target: `${ENGINE}/common`,
    from: [...ENGINE_FEATURES, ...ENGINE_TOUCH_POINTS].map((d) => `${ENGINE}/${d}`).concat(ENGINE_TOP),
    message: 'engine common/ is the bottom: it imports only shared/',
  },
  {
    target: `${ENGINE}/service`,
    from: [`${ENGINE}/api.ts`, `${ENGINE}/index.ts`],
    message: 'service/ sits below the engine surface (api.ts) and its builder (index.ts)',
  },
];

/** The test kit sits below the tests and benchmarks that use it. */
const testkitZones = [
  { target: './testkit', from: ['./tests', './e2e', './bench'], message: 'the test kit must not import tests, e2e or bench' },
];

/**
 * Renderer tests drive the UI over the real engine built on the test kit's fakes: of the tools they may import
 * testkit/fakes only.
 */
const rendererTestZones = [
  { target: './renderer', from: ['./tests', './e2e', './bench'], message: 'renderer tests must not import tests, e2e or bench' },
  {
    target: './renderer',
    from: './testkit',
    except: ['./fakes'],
    message: "renderer tests may import the test kit's fakes (testkit/fakes), nothing else of it",
  },
];

/** Tests next to product files are tools: the zones above apply to product files only. */
const TEST_FILES = ['**/*.test.ts', '**/*.test.tsx', 'renderer/src/test/**'];

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'out/',
      'test-results/',
      'playwright-report/',
      'e2e/artifacts/',
      'electron/cri/generated/',
      '.vitest/',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,mts,js,mjs,cjs}'],
    plugins: { 'import-x': importX },
    languageOptions: { globals: { ...globals.node } },
    settings: {
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          noWarnOnMultipleProjects: true,
          project: ['tsconfig.tools.json', 'electron/tsconfig.json', 'renderer/tsconfig.json', 'shared/tsconfig.json'],
        }),
      ],
    },
    rules: {
      'import-x/no-unresolved': ['error', { ignore: ['^electron$'] }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['electron/**/*.ts', 'renderer/**/*.{ts,tsx}', 'shared/**/*.ts', 'bin/**/*.mjs'],
    ignores: TEST_FILES,
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: ROOT, zones: [...zones, ...engineZones] }] },
  },
  {
    files: ['renderer/src/**/*.test.{ts,tsx}', 'renderer/src/test/**'],
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: ROOT, zones: rendererTestZones }] },
  },
  // tests build the engine through the test kit, so the deps it needs are filled in one place
  {
    files: ['tests/**/*.{ts,tsx}', 'e2e/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='SandboxEngine']",
          message: 'build the engine with testkit/fakes/test-engine.ts (createTestEngine, or buildTestEngine over fakes of your own)',
        },
      ],
    },
  },
  // e2e page loads go through e2e/support/navigate.ts, which loads again when Chromium aborted the page or one of its
  // files with net::ERR_NETWORK_CHANGED (the real files and other workers add host interfaces beside every spec)
  {
    files: ['e2e/**/*.ts'],
    ignores: ['e2e/support/navigate.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='SandboxEngine']",
          message: 'build the engine with testkit/fakes/test-engine.ts (createTestEngine, or buildTestEngine over fakes of your own)',
        },
        {
          selector:
            "CallExpression[callee.property.name=/^(goto|reload)$/][callee.object.name='page'], CallExpression[callee.property.name=/^(goto|reload)$/][callee.object.property.name='page']",
          message: 'load the page with gotoApp / reloadApp (e2e/support/navigate.ts): they retry a load Chromium aborted',
        },
      ],
    },
  },
  {
    files: ['testkit/**/*.ts'],
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: ROOT, zones: testkitZones }] },
  },
  // Electron itself: only the shell (main, preload) may load it
  {
    files: ['electron/**/*.ts', 'shared/**/*.ts', 'renderer/**/*.{ts,tsx}'],
    ignores: ['electron/main/**', 'electron/preload/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'electron', message: 'only electron/main and electron/preload may import electron' }] },
      ],
    },
  },
  // shared/ runs in both worlds: no Node built-ins, no React
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'electron', message: 'shared/ runs in the renderer too' },
            { name: 'react', message: 'shared/ is not UI' },
          ],
          patterns: [
            { regex: '^node:', message: 'shared/ runs in the renderer too: no Node built-ins' },
            {
              regex: '^(fs|path|os|child_process|net|http|crypto|util)(/|$)',
              message: 'shared/ runs in the renderer too: no Node built-ins',
            },
          ],
        },
      ],
    },
  },
  // the renderer has no Node
  {
    files: ['renderer/src/**/*.{ts,tsx}'],
    ignores: TEST_FILES,
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      // a React Compiler hint (TanStack Virtual cannot be auto-memoised); this app does not use the compiler
      'react-hooks/incompatible-library': 'off',
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'electron', message: 'the renderer reaches the engine only through shared/ipc' },
            {
              name: 'zustand',
              importNames: ['create'],
              message: 'make UI stores with createUiStore (renderer/src/lib/ui-store.ts): the component tests reset them between files',
            },
          ],
          patterns: [{ regex: '^node:', message: 'the renderer has no Node' }],
        },
      ],
    },
  },
  {
    // the one place a zustand store is made
    files: ['renderer/src/lib/ui-store.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'the renderer reaches the engine only through shared/ipc' }],
          patterns: [{ regex: '^node:', message: 'the renderer has no Node' }],
        },
      ],
    },
  },
  {
    files: ['renderer/src/**/*.test.{ts,tsx}', 'renderer/src/test/**'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
