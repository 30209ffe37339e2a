import { fileURLToPath } from 'node:url';

/**
 * The resolv.conf the tests' and benchmarks' pods get when their config has no dns_config: no nameserver, so no
 * probe sends a DNS query off this host. Engines the test kit builds take it as their `resolvConf`; CLIs and engines
 * started elsewhere in a test run get it through PODSCOPE_RESOLV_CONF (vitest.config.ts, e2e/playwright.config.ts).
 */
export const TEST_RESOLV_CONF = fileURLToPath(new URL('./resolv.conf', import.meta.url));
