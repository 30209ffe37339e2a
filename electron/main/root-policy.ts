/**
 * Chromium refuses to run as root with its sandbox on, and the engine needs root (netns, iptables, runc).
 * Decision: as root, Electron does NOT silently add --no-sandbox. It exits with an explanation and points at
 * browser mode (`podscope serve`), where only a small Node process is privileged and the user's own browser keeps
 * its full sandbox. A user who accepts the risk passes --allow-root: then Chromium runs with --no-sandbox and the
 * window shows a permanent warning (HostEnvironment.chromiumSandbox = false). Nothing here imports electron so the
 * decision is testable.
 */
export type RootDecision = { action: 'normal' } | { action: 'no-sandbox'; warning: string } | { action: 'refuse'; message: string };

export const ALLOW_ROOT_FLAG = '--allow-root';

export function decideRootPolicy(uid: number | undefined, argv: string[]): RootDecision {
  if (uid !== 0) return { action: 'normal' };
  if (argv.includes(ALLOW_ROOT_FLAG)) {
    return {
      action: 'no-sandbox',
      warning: 'Running as root with the Chromium sandbox disabled (--allow-root). Only load Podscope itself in this window.',
    };
  }
  return {
    action: 'refuse',
    message: [
      'podscope: refusing to start the desktop window as root.',
      'Chromium cannot keep its sandbox as root, and the engine needs root to create network namespaces.',
      'Either run browser mode, where only the engine is privileged and your browser keeps its sandbox:',
      '    sudo npx podscope serve        (then open the printed URL as your normal user)',
      `or accept an unsandboxed renderer explicitly:  podscope-desktop ${ALLOW_ROOT_FLAG}`,
    ].join('\n'),
  };
}
