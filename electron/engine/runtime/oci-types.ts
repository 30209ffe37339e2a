/** The subset of the OCI runtime-spec config.json that the pause and app containers use (field names as in the spec). */
import type { OciSeccomp } from './seccomp';

export interface OciMount {
  destination: string;
  type: string;
  source: string;
  options: string[];
}

export interface OciNamespace {
  type: 'pid' | 'ipc' | 'uts' | 'mount' | 'network' | 'user' | 'cgroup';
  path?: string;
}

export interface OciSpec {
  ociVersion: string;
  process: {
    terminal: boolean;
    user: { uid: number; gid: number; additionalGids: number[] };
    args: string[];
    env: string[];
    cwd: string;
    capabilities: { bounding: string[]; effective: string[]; permitted: string[] };
    noNewPrivileges: boolean;
    oomScoreAdj: number;
  };
  root: { path: string; readonly: boolean };
  hostname: string;
  mounts: OciMount[];
  annotations: Record<string, string>;
  linux: {
    sysctl: Record<string, string>;
    resources: { devices: { allow: boolean; access: string }[]; cpu: { shares: number } };
    cgroupsPath: string;
    namespaces: OciNamespace[];
    maskedPaths: string[];
    readonlyPaths: string[];
    seccomp?: OciSeccomp;
  };
}

/** The parts of an OCI image config (image-spec config.md) the runtime uses. */
export interface ImageRuntimeConfig {
  User?: string;
  ExposedPorts?: Record<string, object>;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  Volumes?: Record<string, object>;
  WorkingDir?: string;
  Labels?: Record<string, string>;
  StopSignal?: string;
}
