/** Builds the renderer once so browser mode serves the current code; refuses to run without root. */
import { build } from 'vite';
import { fileURLToPath } from 'node:url';

export default async function globalSetup(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('the e2e suite drives the real engine (netns, CNI, runc): run it as root');
  if (process.env.PODSCOPE_E2E_SKIP_BUILD !== '1') {
    await build({ configFile: fileURLToPath(new URL('../../renderer/vite.config.ts', import.meta.url)), logLevel: 'warn' });
  }
}
