import { defineConfig } from 'vitest/config';

// Two projects: "unit" runs anywhere (fakes only, fake CNI plugins as real executables, jsdom components);
// "real" needs root and touches the host (netns, Debian's CNI plugins, runc, gRPC sockets), so its files run one at a time.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts', 'tests/protocol/**/*.test.ts', 'renderer/src/**/*.test.{ts,tsx}', 'electron/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['tests/setup/testing-library.ts'],
          testTimeout: 20000,
        },
      },
      {
        test: {
          name: 'real',
          include: ['tests/real/**/*.test.ts', 'tests/cri/**/*.test.ts'],
          environment: 'node',
          fileParallelism: false,
          testTimeout: 120000,
          hookTimeout: 120000,
        },
      },
    ],
  },
});
