/**
 * The packet trace as the probe asks for it (probe/deps.ts ProbeTracer): the tracer itself, and the step builder with
 * the rule owners of the pods involved. Composed here so that neither feature imports the other.
 */
import type { ProbeTracer } from '../probe/deps';
import type { FlowRecord, FlowTracer } from '../trace/flow-tracer';
import { RuleOwners } from '../trace/ownership';
import { buildTrace } from '../trace/steps';

export function probeTracer(tracer: FlowTracer): ProbeTracer {
  return {
    allocatePort: (avoid) => tracer.allocatePort(avoid),
    releasePort: (port) => tracer.releasePort(port),
    begin: (flows, signal) => tracer.begin(flows, signal),
    // the record is one begin() returned above, handed back by the probe unchanged
    explain: ({ known, record, ...rest }) => buildTrace({ ...rest, record: record as FlowRecord, owners: new RuleOwners(known) }),
  };
}
