/**
 * The OS touch points of the image store: overlayfs whiteout marks in unpacked layers, and the overlay mount of a
 * container's rootfs. Node has neither mknod nor setxattr, so they run tools: `mknod` (coreutils, always on Debian)
 * and `setfattr` (the attr package) when installed, else perl's syscall() (perl-base is Essential on Debian) with
 * the setxattr syscall number of this architecture.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import { runChecked, type ProcessRunner } from '../os/exec';
import { busyboxOnce } from '../os/busybox';

export interface OverlayMarks {
  /** a 0/0 character device at `path`: overlayfs's "this name is deleted" */
  whiteout(path: string): Promise<void>;
  /** trusted.overlay.opaque=y on `dir`: overlayfs's "hide everything below this directory" */
  opaque(dir: string): Promise<void>;
}

export interface RootfsMounter {
  /** mounts overlay at `target`: `lowers` top first */
  mount(input: { lowers: string[]; upper: string; work: string; target: string; signal?: AbortSignal }): Promise<void>;
  /** unmounts `target` if mounted (lazily when busy); idempotent */
  unmount(target: string): Promise<void>;
}

/** x86_64 / aarch64 setxattr(2) numbers for the perl fallback. */
const SETXATTR_SYSCALL: Record<string, number> = { x64: 188, arm64: 5 };

export class HostOverlayMarks implements OverlayMarks {
  private setfattr: Promise<boolean> | undefined;
  constructor(private readonly runner: ProcessRunner) {}

  async whiteout(path: string): Promise<void> {
    await runChecked(this.runner, { file: 'mknod', args: ['-m', '000', path, 'c', '0', '0'], timeoutMs: 10_000 });
  }

  async opaque(dir: string): Promise<void> {
    this.setfattr ??= this.runner.run({ file: 'setfattr', args: ['--version'], timeoutMs: 5000 }).then(
      (r) => r.exitCode === 0,
      () => false,
    );
    if (await this.setfattr) {
      await runChecked(this.runner, { file: 'setfattr', args: ['-n', 'trusted.overlay.opaque', '-v', 'y', dir], timeoutMs: 10_000 });
      return;
    }
    const nr = SETXATTR_SYSCALL[process.arch];
    if (nr === undefined)
      throw new PodscopeError(
        'FailedPrecondition',
        `opaque whiteout in a layer needs setfattr (install the attr package) on ${process.arch}`,
      );
    // the arguments are copied into variables: perl's syscall() wants writable scalars
    const script = `my ($p, $n, $v) = ($ARGV[0], "trusted.overlay.opaque", "y"); syscall(${nr}, $p, $n, $v, 1, 0) == 0 or die "setxattr $p: $!\\n";`;
    await runChecked(this.runner, { file: 'perl', args: ['-e', script, dir], timeoutMs: 10_000 });
  }
}

export class HostRootfsMounter implements RootfsMounter {
  /**
   * @param busybox where busybox is (os/busybox.ts): its static `mount`/`umount` applets start in about half the
   * time of util-linux's, and one of each runs per container; undefined means util-linux `mount`/`umount`
   */
  constructor(
    private readonly runner: ProcessRunner,
    private readonly busybox: () => Promise<string | undefined> = busyboxOnce,
  ) {}

  private async tool(name: 'mount' | 'umount', args: string[]): Promise<{ file: string; args: string[] }> {
    const busybox = await this.busybox();
    return busybox ? { file: busybox, args: [name, ...args] } : { file: name, args };
  }

  async mount(input: { lowers: string[]; upper: string; work: string; target: string; signal?: AbortSignal }): Promise<void> {
    const options = `lowerdir=${input.lowers.join(':')},upperdir=${input.upper},workdir=${input.work}`;
    // mount(2) takes one page of options; longer lowerdir lists need the new mount API, which mount(8) here lacks
    if (options.length > 4000)
      throw new PodscopeError(
        'FailedPrecondition',
        `overlay mount options for ${input.lowers.length} layers exceed one page (${options.length} bytes)`,
      );
    if (input.lowers.some((l) => /[:,]/.test(l)))
      throw new PodscopeError('InvalidArgument', 'overlay lower dir paths may not contain ":" or ","');
    await runChecked(this.runner, {
      ...(await this.tool('mount', ['-t', 'overlay', 'overlay', '-o', options, input.target])),
      timeoutMs: 30_000,
      signal: input.signal,
    });
  }

  async unmount(target: string): Promise<void> {
    const mounted = await this.isMounted(target);
    if (!mounted) return;
    const r = await this.runner.run({ ...(await this.tool('umount', [target])), timeoutMs: 30_000 });
    if (r.exitCode !== 0) await runChecked(this.runner, { ...(await this.tool('umount', ['-l', target])), timeoutMs: 30_000 });
  }

  private async isMounted(target: string): Promise<boolean> {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
    // field 5 is the mount point, with spaces etc. octal-escaped
    const esc = target.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
    return text.split('\n').some((line) => line.split(' ')[4] === esc);
  }
}
