/**
 * The docs and the code agree, checked rather than hoped for:
 * - every folder of electron/ and electron/engine/ is named in docs/architecture.md (a new folder needs its line),
 *   and every repo path README.md and docs/architecture.md name exists (a move updates the docs);
 * - every docs/semantics.md section cited by its anchor in a code comment or a doc exists there (a heading's GitHub
 *   slug, or an explicit `<a id>`);
 * - no code comment cites an issue number (a comment says why, in words that outlive the tracker);
 * - no import cycle among shared/ and electron/ (a static scan of relative imports).
 *
 * The cycle scan counts type-only imports too: a cycle of types erases at run time but still ties two modules
 * together (neither can be read, moved or split without the other), which is what layering is meant to prevent.
 * Dynamic `import()` counts as well: a lazy load is still a dependency.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from './helpers/typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

const SKIP_DIRS = new Set(['node_modules', 'generated', 'dist', 'out', 'test-results', 'playwright-report', 'artifacts', '.vitest']);

function walk(dir: string, keep: (file: string) => boolean, out: string[] = []): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return out;
  for (const name of readdirSync(abs)) {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) {
      if (!SKIP_DIRS.has(name) && !name.startsWith('.')) walk(rel, keep, out);
    } else if (keep(rel)) out.push(rel);
  }
  return out;
}

const subdirs = (dir: string) =>
  readdirSync(join(ROOT, dir))
    .filter((n) => statSync(join(ROOT, dir, n)).isDirectory())
    .sort();

const CODE = /\.(ts|tsx|mts|js|mjs|cjs)$/;
const CODE_ROOTS = ['electron', 'shared', 'renderer', 'testkit', 'tests', 'bench', 'e2e', 'scripts', 'bin'];
const codeFiles = () => CODE_ROOTS.flatMap((d) => walk(d, (f) => CODE.test(f)));
const docFiles = () => ['README.md', ...walk('docs', (f) => f.endsWith('.md'))].filter((f) => existsSync(join(ROOT, f)));

const commentCache = new Map<string, Array<{ line: number; text: string }>>();

/**
 * The comments of a source file, with their line numbers (TypeScript's scanner, so strings and regexes are not comments).
 * Read once per file: two checks below read every code file's comments.
 */
function commentsOf(file: string): Array<{ line: number; text: string }> {
  const cached = commentCache.get(file);
  if (cached) return cached;
  const text = read(file);
  const scanner = ts.createScanner(
    ts.ScriptTarget.Latest,
    false,
    /\.tsx$/.test(file) ? ts.LanguageVariant.JSX : ts.LanguageVariant.Standard,
    text,
  );
  const out: Array<{ line: number; text: string }> = [];
  // comments come in order, so the line count goes on from the previous one (not recounted from the top for each)
  let line = 1;
  let counted = 0;
  const lineOf = (pos: number) => {
    for (let nl = text.indexOf('\n', counted); nl !== -1 && nl < pos; nl = text.indexOf('\n', nl + 1)) {
      line++;
      counted = nl + 1;
    }
    return line;
  };
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia)
      out.push({ line: lineOf(scanner.getTokenStart()), text: scanner.getTokenText() });
    // a `/` after an expression is division, elsewhere it starts a regex: ask the scanner to re-read it
    if (kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) scanner.reScanSlashToken();
    if (kind === ts.SyntaxKind.CloseBraceToken) scanner.reScanTemplateToken(false);
  }
  commentCache.set(file, out);
  return out;
}

/**
 * The anchors GitHub gives a markdown file: each heading's slug (lower case, punctuation dropped, spaces to hyphens,
 * repeats numbered -1, -2, …) and every explicit `<a id>`/`<a name>`.
 */
function githubSlugs(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const slugs = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (!fenced) for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) slugs.add(a[1]!);
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link counts by its text
      .replace(/<[^>]+>/g, ''); // inline HTML tags are not text
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  }
  return slugs;
}

const REPO_ROOTS = ['electron', 'shared', 'renderer', 'testkit', 'tests', 'e2e', 'bench', 'scripts', 'bin', 'docs'];

/**
 * The repo paths a doc names: anything starting at a top-level folder (`electron/…`, `tests/…`), `engine/…` (short
 * for electron/engine/…), and in backticks a path starting at an engine folder (`pods/store.ts`). Patterns and
 * placeholders (`<stateDir>`, `*`, `{a,b}`, `…`) are not paths.
 */
function namedPaths(markdown: string, engineFolders: string[]): string[] {
  const out: string[] = [];
  const clean = (p: string) => p.replace(/[.,;:)]+$/, '');
  const isPattern = (p: string) => /[<>*{}…]/.test(p);
  for (const m of markdown.matchAll(new RegExp(`(?<![\\w./@-])((?:${[...REPO_ROOTS, 'engine'].join('|')})/[\\w./<>*{},…-]*)`, 'g'))) {
    const p = clean(m[1]!);
    if (isPattern(p) || p.includes('//')) continue;
    out.push(p.startsWith('engine/') ? `electron/${p}` : p);
  }
  for (const m of markdown.matchAll(/`([\w./-]+)`/g)) {
    const p = clean(m[1]!);
    if (engineFolders.includes(p.split('/')[0]!) && p.includes('/') && !isPattern(p)) out.push(`electron/engine/${p}`);
  }
  return [...new Set(out)];
}

describe('docs match the code', () => {
  it('docs/architecture.md names every folder of electron/ and electron/engine/', () => {
    const doc = read('docs/architecture.md');
    const named = (path: string) => doc.includes(`${path}/`);
    const missing = [
      ...subdirs('electron')
        .map((d) => `electron/${d}`)
        .filter((p) => !named(p)),
      ...subdirs('electron/engine')
        .map((d) => `engine/${d}`)
        .filter((p) => !named(p)),
    ];
    expect(missing, 'folders docs/architecture.md does not name').toEqual([]);
  });

  it('every repo path README.md and docs/architecture.md name exists', () => {
    const ENGINE_FOLDERS = subdirs('electron/engine');
    const missing: string[] = [];
    for (const doc of ['README.md', 'docs/architecture.md']) {
      for (const path of namedPaths(read(doc), ENGINE_FOLDERS)) if (!existsSync(join(ROOT, path))) missing.push(`${doc}: ${path}`);
    }
    expect([...new Set(missing)], 'paths the docs name that do not exist').toEqual([]);
  });

  it('the path check reads a doc as a newcomer would (a path that is gone is reported)', () => {
    const md =
      'see `electron/engine/testing/` and `engine/pods/run.ts`, `pods/store.ts`, tests/unit/zz-gone.test.ts and `<stateDir>/images`';
    expect(namedPaths(md, ['pods'])).toEqual([
      'electron/engine/testing/',
      'electron/engine/pods/run.ts',
      'tests/unit/zz-gone.test.ts',
      'electron/engine/pods/store.ts',
    ]);
  });

  it('GitHub slugs: punctuation dropped, spaces to hyphens, repeats numbered; explicit anchors count', () => {
    const md =
      '# gRPC errors\n## `podscope cri` (the server)\n## Pod IP selection\n## Pod IP selection\n```\n# not a heading\n```\n* <a id="x-y"></a>**X**\n';
    expect([...githubSlugs(md)]).toEqual(['grpc-errors', 'podscope-cri-the-server', 'pod-ip-selection', 'pod-ip-selection-1', 'x-y']);
  });

  it('every semantics.md#anchor cited in code comments and docs is a heading of docs/semantics.md', () => {
    const anchors = githubSlugs(read('docs/semantics.md'));
    const cite = /semantics\.md#([\w-]+)/g;
    const broken: string[] = [];
    for (const f of codeFiles())
      for (const c of commentsOf(f)) for (const m of c.text.matchAll(cite)) if (!anchors.has(m[1]!)) broken.push(`${f}:${c.line} #${m[1]}`);
    for (const f of docFiles()) {
      const text = read(f);
      const local = f === 'docs/semantics.md' ? /\]\(#([\w-]+)\)/g : /(?:^|[^\w])semantics\.md#([\w-]+)/g;
      for (const m of text.matchAll(local)) if (!anchors.has(m[1]!)) broken.push(`${f} #${m[1]}`);
      if (f !== 'docs/semantics.md') for (const m of text.matchAll(cite)) if (!anchors.has(m[1]!)) broken.push(`${f} #${m[1]}`);
    }
    expect([...new Set(broken)], 'citations of docs/semantics.md sections that do not exist').toEqual([]);
  });

  it('no code comment cites an issue number', () => {
    const issue = /(?:\bissues?\s*#?\s*\d+\b|(?<![\w&/#-])#\d+\b|\bgh-\d+\b)/i;
    const cited: string[] = [];
    for (const f of codeFiles())
      for (const c of commentsOf(f)) {
        const m = issue.exec(c.text);
        if (m) cited.push(`${f}:${c.line} ${m[0]}`);
      }
    expect(cited, 'comments that cite an issue number (say why in words instead)').toEqual([]);
  });

  it('no import cycles among shared/ and electron/ (type-only and dynamic imports included)', () => {
    const files = [...walk('shared', (f) => /\.tsx?$/.test(f)), ...walk('electron', (f) => /\.tsx?$/.test(f))].filter(
      (f) => !/\.test\.tsx?$/.test(f) && !f.endsWith('.d.ts'),
    );
    const known = new Set(files);
    const resolveSpec = (from: string, spec: string) => {
      const base = relative(ROOT, resolve(ROOT, dirname(from), spec));
      return [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), base].find((c) => known.has(c));
    };
    const graph = new Map<string, string[]>();
    for (const f of files) {
      const info = ts.preProcessFile(read(f), true, true);
      const deps = info.importedFiles.map((i) => i.fileName).filter((s) => s.startsWith('.'));
      graph.set(f, [...new Set(deps.map((d) => resolveSpec(f, d)).filter((d): d is string => !!d))]);
    }
    // Tarjan's strongly connected components: each one larger than a file is a cycle
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    let next = 0;
    const visit = (v: string) => {
      index.set(v, next);
      low.set(v, next++);
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1 || graph.get(v)!.includes(v)) cycles.push(component.sort());
      }
    };
    for (const f of files) if (!index.has(f)) visit(f);
    expect(cycles, 'groups of modules that import each other').toEqual([]);
  });
});
