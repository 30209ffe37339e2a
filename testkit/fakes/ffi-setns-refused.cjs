/**
 * A stand-in for koffi's native module, at the OS boundary a probe agent thread crosses to enter a netns: it loads,
 * and its setns(2) fails with EPERM, as the kernel's does for a process without CAP_SYS_ADMIN. An agent thread given
 * this file stays out of the netns, and the engine runs that agent as a process instead (tests/real/probe-real.test.ts).
 */
'use strict';

const EPERM = 1;

module.exports = {
  load: () => ({ func: () => () => -1 }),
  errno: () => EPERM,
};
