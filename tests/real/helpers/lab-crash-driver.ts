/**
 * A child engine process for tests/real/lab-gc-probe.test.ts: opens an engine on the dirs it is given and starts one
 * lab run whose first DEL plugin exec never starts (its runner holds it), printing "in-del <runId>" at that point so
 * the test can SIGKILL the process with ADD done and DEL not begun, as a crash between the two would leave it.
 * Run with `node --import tsx tests/real/helpers/lab-crash-driver.ts '<json>'`.
 */
import { createEngine, type EngineOptions } from '../../../electron/engine/index';
import { NodeProcessRunner, type ExecRequest, type ExecResult, type ProcessRunner } from '../../../electron/engine/os/exec';
import type { LabCapabilities } from '../../../shared/domain/lab';

interface DriverInput {
  options: Partial<EngineOptions>;
  text: string;
  capabilities: LabCapabilities;
}

const input = JSON.parse(process.argv[2]!) as DriverInput;
const say = (line: string) => process.stdout.write(`${line}\n`);

class HoldDelRunner implements ProcessRunner {
  private readonly inner = new NodeProcessRunner();
  run(req: ExecRequest): Promise<ExecResult> {
    if (req.env?.CNI_COMMAND === 'DEL') {
      say(`in-del ${req.env.CNI_CONTAINERID ?? ''}`);
      return new Promise<ExecResult>(() => undefined);
    }
    return this.inner.run(req);
  }
}

const engine = await createEngine(input.options, { runner: new HoldDelRunner(), log: (l) => say(`log ${l}`) });
say('ready');
await engine.lab!.run({ text: input.text, capabilities: input.capabilities, skipCheck: true });
say('finished (the test should have killed this process)');
