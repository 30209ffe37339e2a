/**
 * Teardown that keeps going: every step is attempted, and what failed is collected instead of stopping the rest
 * (a fixture that gives up half-way leaks the bridge, the netns or a containerd).
 */
export function teardownSteps(): { attempt(what: string, f: () => Promise<unknown>): Promise<void>; problems: string[] } {
  const problems: string[] = [];
  return {
    problems,
    async attempt(what, f) {
      try {
        await f();
      } catch (e) {
        problems.push(`${what}: ${(e as Error).message}`);
      }
    },
  };
}
