/**
 * PodSandboxConfig in CRI's own field names (snake_case, as in kubernetes/cri-api runtime.v1 and in crictl's
 * pod-config files), enums as their proto numbers. This is the one shape every front door hands to the engine.
 */
import { z } from 'zod';
import { lazySchema } from './lazy-schema';

export const Protocol = { TCP: 0, UDP: 1, SCTP: 2 } as const;
export const NamespaceMode = { POD: 0, CONTAINER: 1, NODE: 2, TARGET: 3 } as const;
export type ProtocolName = keyof typeof Protocol;

/** Accepts the proto number or, as a convenience over crictl, the enum name in any case. */
function protoEnum<T extends Record<string, number>>(values: T, what: string) {
  const numbers = Object.values(values);
  return z.preprocess(
    (v) => (typeof v === 'string' && v.toUpperCase() in values ? values[v.toUpperCase() as keyof T] : v),
    z
      .number({
        error: `${what} must be one of ${Object.entries(values)
          .map(([k, n]) => `${n} (${k})`)
          .join(', ')}`,
      })
      .int()
      .refine((n) => numbers.includes(n), {
        message: `${what} must be one of ${Object.entries(values)
          .map(([k, n]) => `${n} (${k})`)
          .join(', ')}`,
      }),
  );
}

const int32 = lazySchema(() => z.number().int().min(-2147483648).max(2147483647));
const uint32 = lazySchema(() => z.number().int().min(0).max(4294967295));
const stringMap = lazySchema(() => z.record(z.string(), z.string()));

export const PodSandboxMetadataSchema = lazySchema(() =>
  z.strictObject({
    name: z.string().default(''),
    uid: z.string().default(''),
    namespace: z.string().default(''),
    attempt: uint32.default(0),
  }),
);

export const DNSConfigSchema = lazySchema(() =>
  z.strictObject({
    servers: z.array(z.string()).default([]),
    searches: z.array(z.string()).default([]),
    options: z.array(z.string()).default([]),
  }),
);

export const PortMappingSchema = lazySchema(() =>
  z.strictObject({
    protocol: protoEnum(Protocol, 'protocol').default(0),
    container_port: int32.default(0),
    host_port: int32.default(0),
    host_ip: z.string().default(''),
  }),
);

export const NamespaceOptionSchema = lazySchema(() =>
  z.strictObject({
    network: protoEnum(NamespaceMode, 'namespace_options.network').default(0),
    pid: protoEnum(NamespaceMode, 'namespace_options.pid').default(0),
    ipc: protoEnum(NamespaceMode, 'namespace_options.ipc').default(0),
    target_id: z.string().default(''),
  }),
);

const Int64ValueSchema = lazySchema(() => z.strictObject({ value: z.number().int() }));

/** SecurityProfile.ProfileType: RuntimeDefault=0, Unconfined=1, Localhost=2 */
export const ProfileType = { RUNTIMEDEFAULT: 0, UNCONFINED: 1, LOCALHOST: 2 } as const;

/** A seccomp or AppArmor profile choice (CRI SecurityProfile). A present but empty one means RuntimeDefault. */
export const SecurityProfileSchema = lazySchema(() =>
  z.strictObject({
    profile_type: protoEnum(ProfileType, 'profile_type').default(0),
    localhost_ref: z.string().default(''),
  }),
);
export type SecurityProfile = z.output<typeof SecurityProfileSchema>;

export const LinuxSandboxSecurityContextSchema = lazySchema(() =>
  z.strictObject({
    namespace_options: NamespaceOptionSchema.optional(),
    run_as_user: Int64ValueSchema.optional(),
    run_as_group: Int64ValueSchema.optional(),
    readonly_rootfs: z.boolean().default(false),
    supplemental_groups: z.array(z.number().int()).default([]),
    privileged: z.boolean().default(false),
    seccomp_profile_path: z.string().default(''),
    seccomp: SecurityProfileSchema.optional(),
    apparmor: SecurityProfileSchema.optional(),
  }),
);

export const LinuxPodSandboxConfigSchema = lazySchema(() =>
  z.strictObject({
    cgroup_parent: z.string().default(''),
    security_context: LinuxSandboxSecurityContextSchema.optional(),
    sysctls: stringMap.default({}),
  }),
);

export const PodSandboxConfigSchema = lazySchema(() =>
  z.strictObject({
    metadata: PodSandboxMetadataSchema,
    hostname: z.string().default(''),
    log_directory: z.string().default(''),
    dns_config: DNSConfigSchema.optional(),
    port_mappings: z.array(PortMappingSchema).default([]),
    labels: stringMap.default({}),
    annotations: stringMap.default({}),
    linux: LinuxPodSandboxConfigSchema.optional(),
  }),
);

export type PodSandboxMetadata = z.output<typeof PodSandboxMetadataSchema>;
export type DNSConfig = z.output<typeof DNSConfigSchema>;
export type PortMapping = z.output<typeof PortMappingSchema>;
export type NamespaceOption = z.output<typeof NamespaceOptionSchema>;
export type PodSandboxConfig = z.output<typeof PodSandboxConfigSchema>;
/** What a caller may write: every defaulted field optional. */
export type PodSandboxConfigInput = z.input<typeof PodSandboxConfigSchema>;

export const IP_PREFERENCES = ['ipv4', 'ipv6', 'cni'] as const;
export type IpPreference = (typeof IP_PREFERENCES)[number];
export const IpPreferenceSchema = lazySchema(() => z.enum(IP_PREFERENCES));

export function isHostNetwork(config: PodSandboxConfig): boolean {
  return config.linux?.security_context?.namespace_options?.network === NamespaceMode.NODE;
}

export function protocolName(p: number): string {
  const entry = Object.entries(Protocol).find(([, n]) => n === p);
  return entry ? entry[0] : String(p);
}

/** Turns a zod failure into one line per problem, each naming the path, e.g. `port_mappings[1].host_port: …`, `linux.sysctls["net."]: …`. */
export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((i) => {
    const path = i.path.reduce<string>((acc, p) => {
      if (typeof p === 'number') return `${acc}[${p}]`;
      const key = String(p);
      // a map key that is not a plain identifier (`net.ipv4.ip_forward`, `app.kubernetes.io/name`, "") is quoted
      if (acc && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `${acc}[${JSON.stringify(key)}]`;
      return acc ? `${acc}.${key}` : key;
    }, '');
    return path ? `${path}: ${i.message}` : i.message;
  });
}
