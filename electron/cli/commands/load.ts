import { resolve } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { parseCommandArgs } from '../args';
import { withImages } from '../api';

export const help = `podscope load [flags] FILE   (also: podscope images load FILE)
  Loads an OCI image layout (a directory or a tar of one) or a \`docker save\` archive into the local image store,
  verifying every blob and layer. Not available with --endpoint (CRI has no call for it).`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv);
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'load needs exactly one FILE');
  const images = await withImages(flags, (api) => api.load(resolve(positionals[0]!)));
  for (const i of images) process.stdout.write(`Loaded image: ${i.repoTags.join(', ') || '<none>'} (${i.id})\n`);
  return 0;
}
