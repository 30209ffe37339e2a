import { PodscopeError } from '../../../shared/domain/errors';
import type { RegistryAuth } from '../../engine/api';
import { withImages } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope pull [flags] IMAGE
  Pulls an image from an OCI distribution registry (HTTPS; plain HTTP for localhost/127.0.0.1 and --insecure-registry).
  Index/manifest lists resolve to this platform; every blob is verified before it is stored.
  --creds USER:PASS   registry credentials (token or basic auth)
  --auth BASE64       base64 of USER:PASS, as in a docker config.json "auth"
  -q, --quiet         print only the image id`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, {
    creds: { type: 'string' },
    auth: { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'pull needs exactly one image reference');
  const auth = credsToAuth(flags.creds as string | undefined, flags.auth as string | undefined);
  const ref = positionals[0]!;
  let last = '';
  const { id } = await withImages(flags, (api) =>
    api.pull(ref, {
      ...(auth && { auth }),
      onProgress: (p) => {
        // progress on stderr, one line per phase change, so stdout stays the result
        const phase = p.phase;
        if (!flags.quiet && phase !== last && process.stderr.isTTY) process.stderr.write(`${phase}\n`);
        last = phase;
      },
    }),
  );
  process.stdout.write(flags.quiet ? `${id}\n` : `Image is up to date for ${id}\n`);
  return 0;
}

/** crictl's --creds USER[:PASS] (a missing password is an error here: there is no terminal prompt). */
export function credsToAuth(creds: string | undefined, authB64: string | undefined): RegistryAuth | undefined {
  if (authB64) return { auth: authB64 };
  if (creds === undefined) return undefined;
  const i = creds.indexOf(':');
  if (i <= 0) throw new PodscopeError('InvalidArgument', '--creds must be USERNAME:PASSWORD', { details: { field: 'creds' } });
  return { username: creds.slice(0, i), password: creds.slice(i + 1) };
}
