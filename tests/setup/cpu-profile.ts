/**
 * With PODSCOPE_CPU_PROFILE_DIR set, each test file's CPU profile (the worker's JavaScript from the file's imports to
 * its last hook) is written there as <file>-<pid>.cpuprofile, for Chrome's DevTools or speedscope. Vitest ends its
 * workers without the exit that `node --cpu-prof` needs, so the profiler is driven through the inspector here. It is
 * how the suite's CPU was found (see README, "The suite's time"); without the variable this file does nothing.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { basename, join } from 'node:path';
import { afterAll, expect } from 'vitest';

const dir = process.env.PODSCOPE_CPU_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  const file = basename(expect.getState().testPath ?? 'unknown');
  afterAll(async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    writeFileSync(join(dir, `${file}-${process.pid}.cpuprofile`), JSON.stringify(profile));
  });
}
