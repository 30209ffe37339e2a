import { PodscopeError } from '../../../shared/domain/errors';
import { parseCommandArgs } from '../args';
import { withImages } from '../api';

export const help = `podscope inspecti [flags] IMAGE...
  Shows images as JSON (ImageStatus with verbose info), like crictl inspecti. A missing image is an error.`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv);
  if (positionals.length === 0) throw new PodscopeError('InvalidArgument', 'inspecti needs at least one image');
  const out = await withImages(flags, async (api) => {
    const found = [];
    for (const ref of positionals) {
      const st = await api.status(ref, true);
      if (!st) throw new PodscopeError('NotFound', `no such image ${ref}`);
      let info: unknown = st.info;
      try {
        info = st.info.info !== undefined ? JSON.parse(st.info.info) : st.info;
      } catch {
        // a runtime's info that is not JSON is shown as it came
      }
      found.push({ status: st.image, info });
    }
    return found;
  });
  process.stdout.write(`${JSON.stringify(out.length === 1 ? out[0] : out, null, 2)}\n`);
  return 0;
}
