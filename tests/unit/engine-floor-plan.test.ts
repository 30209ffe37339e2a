/**
 * The engine's folders form a layered plan, not a web: no folder of electron/engine imports a folder that imports it
 * back, however long the way round (docs/architecture.md#the-engines-folders). Every relative import of every .ts file
 * counts, type-only and dynamic ones too: a cycle of types still ties two folders together. The check is proven on a
 * synthetic file that closes a cycle, so it cannot pass by finding nothing.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from './helpers/typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENGINE = join(ROOT, 'electron/engine');

function engineFiles(dir = ENGINE, out = new Map<string, string>()): Map<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) engineFiles(path, out);
    else if (name.endsWith('.ts')) out.set(relative(ENGINE, path), readFileSync(path, 'utf8'));
  }
  return out;
}

/** the folder a file of the engine sits in ("." for api.ts and index.ts) */
const folderOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : '.');

/** folder → the folders its files import (relative imports that stay inside the engine) */
export function folderGraph(files: Map<string, string>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [file, text] of files) {
    const from = folderOf(file);
    const edges = graph.get(from) ?? graph.set(from, new Set()).get(from)!;
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = relative(ENGINE, resolve(ENGINE, dirname(file), fileName));
      if (target.startsWith('..')) continue;
      const to = folderOf(target.includes('/') ? target : `${target}.ts`);
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/** every cycle's folders in order (each found once, from its first folder), or none */
export function folderCycles(graph: Map<string, Set<string>>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, 'open');
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 'open') cycles.push([...stack.slice(stack.indexOf(m)), m]);
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of [...graph.keys()].sort()) if (!state.has(n)) visit(n);
  return cycles;
}

describe('the engine floor plan', () => {
  it('has no folder-level import cycle inside electron/engine', () => {
    expect(folderCycles(folderGraph(engineFiles())).map((c) => c.join(' → '))).toEqual([]);
  });

  it('finds a cycle when one file closes it (a synthetic common/ file importing the pods feature)', () => {
    const files = engineFiles();
    files.set('common/zz.ts', "import type { SandboxRecord } from '../pods/record';\nexport type R = SandboxRecord;\n");
    const cycles = folderCycles(folderGraph(files)).map((c) => c.join(' → '));
    // every cycle found runs through the one edge the synthetic file added
    expect(cycles.length).toBeGreaterThan(0);
    for (const c of cycles) expect(c).toContain('common → pods');
  });

  it('finds a longer way round too (trace → probe → ... → trace)', () => {
    const graph = new Map([
      ['trace', new Set(['netns'])],
      ['netns', new Set(['probe'])],
      ['probe', new Set(['trace'])],
    ]);
    expect(folderCycles(graph)).toEqual([['netns', 'probe', 'trace', 'netns']]);
  });

  it('the service folder composes the features, and the features import none of one another', () => {
    const graph = folderGraph(engineFiles());
    const features = ['pods', 'containers', 'images', 'lab', 'probe', 'trace', 'topology', 'throughput', 'foreign'];
    for (const f of features)
      expect(
        [...(graph.get(f) ?? [])].filter((t) => features.includes(t) || t === 'service'),
        f,
      ).toEqual([]);
    expect([...graph.get('service')!]).toEqual(expect.arrayContaining(['pods', 'containers', 'probe', 'trace', 'topology', 'throughput']));
  });
});
