/**
 * The controller a long-lived measurer aborts on close(): its signal is handed to every measurement in flight, and
 * each exec, agent and wait under them adds one listener for as long as it runs (removed when it ends). A probe across
 * a few nodes has more than ten of those at once, which is expected, not the leak Node's warning at eleven listeners
 * looks for (the CLI printed "MaxListenersExceededWarning" on `probe --all-nodes` with five nodes).
 */
import { setMaxListeners } from 'node:events';

export function closeController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
