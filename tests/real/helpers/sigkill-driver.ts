/**
 * A child engine process for the SIGKILL loop (tests/real/sigkill-loop.test.ts): opens an engine on the dirs it is
 * given, then runs, stops and removes one sandbox, printing a line after each step so the test knows where it was
 * when it killed the process. With `finish: true` it instead stops and removes whatever sandbox the dirs hold (a
 * restart that is itself killed: recovery, garbage collection and the finishing stop/remove get interrupted). The test runs it bundled (testkit/bundle-script.ts); by hand: `node --import tsx tests/real/helpers/sigkill-driver.ts '<json>'`.
 */
import { createEngine, type EngineOptions } from '../../../electron/engine/index';

interface DriverInput {
  options: Partial<EngineOptions>;
  name: string;
  hostPort: number;
  finish?: boolean;
}

const input = JSON.parse(process.argv[2]!) as DriverInput;
const say = (line: string) => process.stdout.write(`${line}\n`);
const engine = await createEngine(input.options, { log: (l) => say(`gc ${l}`) });
say('ready');
if (input.finish) {
  for (const s of await engine.list()) {
    await engine.stop(s.id);
    say('stopped');
    await engine.remove(s.id);
    say('removed');
  }
  await engine.close();
  say('done');
  process.exit(0);
}
const { id } = await engine.run({
  config: {
    metadata: { name: input.name, namespace: 'sigkill', uid: `uid-${input.name}` },
    port_mappings: [{ container_port: 80, host_port: input.hostPort }],
    annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
  },
});
say(`ran ${id}`);
await engine.stop(id);
say('stopped');
await engine.remove(id);
say('removed');
await engine.close();
say('done');
