/** `--endpoint` once is a string for every verb; more than once only where the verb works across nodes. */
import { describe, expect, it } from 'vitest';
import { parseCommandArgs } from '../../electron/cli/args';

describe('--endpoint given more than once', () => {
  it('stays a single string when given once', () => {
    const { flags } = parseCommandArgs(['--endpoint', '/a.sock']);
    expect(flags.endpoint).toBe('/a.sock');
    expect(flags.endpoints).toBeUndefined();
  });

  it('lands in endpoints for a verb across nodes, leaving endpoint unset', () => {
    const { flags } = parseCommandArgs(['--endpoint', '/a.sock', '--endpoint', '/b.sock'], {}, { manyEndpoints: true });
    expect(flags.endpoints).toEqual(['/a.sock', '/b.sock']);
    expect(flags.endpoint).toBeUndefined();
  });

  it('is refused by a verb of one endpoint, not silently narrowed to the last one', () => {
    expect(() => parseCommandArgs(['--endpoint', '/a.sock', '--endpoint', '/b.sock'])).toThrow(/taken once/);
  });
});
