/**
 * The environment of the small Node programs the engine starts with `node -e` (probe agents, throughput meters, the
 * runc stream dialer, the spawn helper): PATH and nothing else of the engine's own, plus what the caller names.
 *
 * Why not the engine's whole environment: those programs are self-contained strings that load no module and open no
 * TLS connection, yet Node acts on some variables at every start. NODE_EXTRA_CA_CERTS makes it read and parse the whole
 * CA bundle before running a line (a probe agent: 150 ms CPU with Debian's bundle named there, 50 ms without, Node 20
 * on this project's machines, median of 15 agents each); NODE_OPTIONS can preload a loader (`--import tsx` while
 * developing) or a profiler into each one.
 * ELECTRON_RUN_AS_NODE: inside the Electron main, execPath is the Electron binary, which it turns into plain Node
 * (node ignores it).
 */
export function nodeScriptEnv(pass: readonly string[] = []): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', ELECTRON_RUN_AS_NODE: '1' };
  for (const name of pass) if (process.env[name] !== undefined) env[name] = process.env[name];
  return env;
}
