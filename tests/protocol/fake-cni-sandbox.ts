/**
 * A throwaway CNI world for protocol tests: temp conf/bin/cache dirs, the fake plugin copied in under each type name,
 * and a log every fake plugin appends its env and stdin to.
 */
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCniManager } from '../../electron/engine/cni/cni-manager';
import type { CniCallRecord, CniManager } from '../../electron/engine/cni/types';

const FIXTURES = fileURLToPath(new URL('../fixtures/fake-cni/', import.meta.url));
/** fixture per plugin type; every other type is the configurable fake-plugin.py */
const SPECIAL_PLUGINS: Record<string, string> = { loopback: 'loopback.sh', hang: 'hang.sh' };

export interface LoggedExec {
  type: string;
  verb: string;
  env: Record<string, string>;
  stdin: string;
  conf: Record<string, unknown>;
}

export class FakeCniSandbox {
  readonly records: CniCallRecord[] = [];
  private constructor(readonly root: string) {}

  static async create(types: string[]): Promise<FakeCniSandbox> {
    const box = new FakeCniSandbox(await mkdtemp(path.join(tmpdir(), 'psc-cni-proto-')));
    await Promise.all([box.confDir, box.binDir, box.cacheDir].map((d) => mkdir(d, { recursive: true })));
    // loopback is always there: the built-in lo network runs it on every setup
    for (const type of new Set(['loopback', ...types])) await box.installPlugin(type);
    return box;
  }

  get confDir(): string {
    return path.join(this.root, 'net.d');
  }
  get binDir(): string {
    return path.join(this.root, 'bin');
  }
  get cacheDir(): string {
    return path.join(this.root, 'cache');
  }
  get logFile(): string {
    return path.join(this.root, 'calls.jsonl');
  }

  async installPlugin(type: string): Promise<void> {
    const target = path.join(this.binDir, type);
    await copyFile(path.join(FIXTURES, SPECIAL_PLUGINS[type] ?? 'fake-plugin.py'), target);
    await chmod(target, 0o755);
  }

  /** A conflist whose plugins all log to this sandbox; `plugins` entries are merged over `{type}`. */
  async writeConflist(file: string, name: string, cniVersion: string, plugins: Array<Record<string, unknown>>): Promise<string> {
    const withLog = plugins.map((p) => ({ ...p, fake: { log: this.logFile, ...(p.fake as object | undefined) } }));
    const body = JSON.stringify({ cniVersion, name, plugins: withLog }, null, 2);
    const full = path.join(this.confDir, file);
    await writeFile(full, body);
    return full;
  }

  manager(extra: { env?: NodeJS.ProcessEnv; maxConfNum?: number } = {}): CniManager {
    return createCniManager({
      confDir: this.confDir,
      binDirs: [this.binDir],
      cacheDir: this.cacheDir,
      maxConfNum: extra.maxConfNum ?? 1,
      env: extra.env,
    });
  }

  hooks(extra: { pluginTimeoutMs?: number; signal?: AbortSignal } = {}) {
    return { ...extra, record: (r: CniCallRecord) => this.records.push(r) };
  }

  async log(): Promise<LoggedExec[]> {
    let text = '';
    try {
      text = await readFile(this.logFile, 'utf8');
    } catch {
      return [];
    }
    return text
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const entry = JSON.parse(line) as Omit<LoggedExec, 'conf'>;
        return { ...entry, conf: JSON.parse(entry.stdin) as Record<string, unknown> };
      });
  }

  async clearLog(): Promise<void> {
    await rm(this.logFile, { force: true });
  }

  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}
