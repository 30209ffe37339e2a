import { PodscopeError } from '../../../shared/domain/errors';
import { parseCommandArgs } from '../args';
import { humanSize, repoAndTag, table } from '../format';
import type { ImageView } from '../../../shared/domain/streams';
import { withImages } from '../api';

export const help = `podscope images [flags] [REF]
podscope images load FILE
  Lists images (only REF's when given), like crictl images. \`images load FILE\` loads an OCI image layout (dir or
  tar) or a docker save archive into the local store.
  -q, --quiet       image ids only
  -o table|json     output format
  --digests         show the repo digest column
  --no-trunc        full image ids`;

export const subcommands = ['load'] as const;

export async function run(argv: string[]): Promise<number> {
  if (argv[0] === 'load') return (await import('./load')).run(argv.slice(1));
  const { flags, positionals } = parseCommandArgs(argv, {
    quiet: { type: 'boolean', short: 'q' },
    output: { type: 'string', short: 'o' },
    digests: { type: 'boolean' },
    'no-trunc': { type: 'boolean' },
  });
  const output = (flags.output as string | undefined) ?? 'table';
  if (output !== 'table' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be table or json, not ${JSON.stringify(output)}`);
  if (positionals.length > 1) throw new PodscopeError('InvalidArgument', 'images takes at most one image reference');
  const images = await withImages(flags, (api) => api.list(positionals[0]));
  if (flags.quiet) {
    process.stdout.write(images.map((i) => `${i.id}\n`).join(''));
  } else if (output === 'json') {
    process.stdout.write(`${JSON.stringify({ images: images.map(toJson) }, null, 2)}\n`);
  } else {
    const id = (x: string) => (flags['no-trunc'] ? x : x.replace(/^sha256:/, '').slice(0, 13));
    const rows: string[][] = [];
    for (const i of images) {
      const tags = i.repoTags.length > 0 ? i.repoTags : ['<none>:<none>'];
      for (const t of tags) {
        const [repo, tag] = t === '<none>:<none>' ? ['<none>', '<none>'] : repoAndTag(t);
        const digest = i.repoDigests.find((d) => d.startsWith(`${repo}@`))?.split('@')[1] ?? '<none>';
        rows.push([repo, tag, ...(flags.digests ? [digest.replace(/^sha256:/, '').slice(0, 13)] : []), id(i.id), humanSize(i.size)]);
      }
    }
    process.stdout.write(`${table(['IMAGE', 'TAG', ...(flags.digests ? ['DIGEST'] : []), 'IMAGE ID', 'SIZE'], rows)}\n`);
  }
  return 0;
}

/** crictl -o json's shape (sizes as strings, like the proto's uint64 in JSON). */
function toJson(i: ImageView) {
  return {
    id: i.id,
    repoTags: i.repoTags,
    repoDigests: i.repoDigests,
    size: String(i.size),
    uid: i.uid !== undefined ? { value: String(i.uid) } : null,
    username: i.username,
    pinned: i.pinned,
  };
}
