/** Reading crictl's config files for the container verbs (create, run). */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ContainerConfig } from '../../shared/domain/container';
import { loadCrictlContainerConfig } from '../../shared/domain/crictl-container-format';
import { loadCrictlPodConfig } from '../../shared/domain/crictl-format';
import type { PodSandboxConfig } from '../../shared/domain/config';
import { PodscopeError } from '../../shared/domain/errors';

async function text(file: string): Promise<string> {
  return readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new PodscopeError('InvalidArgument', `cannot read ${file}: ${e.code ?? e.message}`);
  });
}

export async function readContainerConfig(file: string): Promise<ContainerConfig> {
  const { config, warnings } = loadCrictlContainerConfig(await text(file), file);
  for (const w of warnings) process.stderr.write(`warning: ${file}: ${w}\n`);
  return config;
}

export async function readPodConfig(file: string): Promise<PodSandboxConfig> {
  const { config, warnings } = loadCrictlPodConfig(await text(file), file, randomUUID);
  for (const w of warnings) process.stderr.write(`warning: ${file}: ${w}\n`);
  return config;
}
