/**
 * One container as its CRI status describes it: what runs (image, command, user), how it ended, the resources and
 * mounts it got, and the security context the runtime applied (the seccomp profile it actually runs under, AppArmor,
 * capabilities), read from the status and the config it was created from, never guessed.
 */
import type { ContainerStatusView } from '../../../../../../shared/domain/container';
import { dateTime } from '../../../../lib/format';
import { KeyValues, LabelChips, Section } from '../../../../lib/ui/KeyValues';
import { JsonView } from '../../../../lib/ui/JsonView';
import { nsToIso } from '../api/containers';
import { Phase } from './LifecycleTab';

const PROPAGATION = ['private', 'host → container', 'bidirectional'];

export function bytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

/** the program and its arguments as a shell would show them (the image's entrypoint/cmd when the config has none) */
export function commandLine(s: ContainerStatusView): string {
  const argv = [...s.config.command, ...s.config.args];
  return argv.length ? argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ') : '';
}

function resourcesRows(s: ContainerStatusView): Array<[string, React.ReactNode]> {
  const r = s.resources ?? s.config.linux?.resources;
  if (!r) return [['resources', <span className="muted">none set (runtime defaults)</span>]];
  const cpus =
    r.cpu_quota > 0 && r.cpu_period > 0
      ? `${(r.cpu_quota / r.cpu_period).toFixed(2)} CPU (quota ${r.cpu_quota} / period ${r.cpu_period} µs)`
      : 'unlimited';
  return [
    ['CPU limit', cpus],
    ['CPU shares', r.cpu_shares ? String(r.cpu_shares) : ''],
    ['memory limit', r.memory_limit_in_bytes > 0 ? bytes(r.memory_limit_in_bytes) : 'unlimited'],
    ['cpuset', [r.cpuset_cpus && `cpus ${r.cpuset_cpus}`, r.cpuset_mems && `mems ${r.cpuset_mems}`].filter(Boolean).join(' · ')],
    ['oom_score_adj', String(r.oom_score_adj)],
  ];
}

export function ContainerDetails({ s }: { s: ContainerStatusView }) {
  const sc = s.config.linux?.security_context;
  const caps = sc?.capabilities;
  const started = nsToIso(s.startedAtNs);
  const finished = nsToIso(s.finishedAtNs);
  return (
    <div className="container-details">
      <div className="container-details-grid">
        <Section title="Process">
          <KeyValues
            rows={[
              ['image', s.image],
              ['image id', s.imageRef],
              ['command', commandLine(s) || <span className="muted">image default (ENTRYPOINT + CMD)</span>],
              ['working dir', s.config.working_dir],
              [
                'user',
                `uid ${s.user.uid} · gid ${s.user.gid}${s.user.supplementalGroups.length ? ` · groups ${s.user.supplementalGroups.join(',')}` : ''}`,
              ],
              ['env', s.config.envs.length ? s.config.envs.map((e) => `${e.key}=${e.value}`).join('\n') : ''],
              ['tty / stdin', `${s.config.tty ? 'tty' : 'no tty'} · ${s.config.stdin ? 'stdin open' : 'no stdin'}`],
              ['pid', s.pid ? String(s.pid) : ''],
              ['monitor', s.monitorPid ? `conmon, pid ${s.monitorPid}` : ''],
              ['log', s.logPath],
            ]}
          />
        </Section>
        <Section title="Lifecycle">
          <KeyValues
            rows={[
              ['state', s.state],
              // kubelet's restart count is the CRI attempt number of the newest container with this name
              ['restarts', String(s.metadata.attempt)],
              ['created', dateTime(s.createdAt)],
              ['started', started ? dateTime(started) : ''],
              ['finished', finished ? dateTime(finished) : ''],
              ['exit code', s.state === 'CONTAINER_EXITED' ? String(s.exitCode) : ''],
              ['reason', s.reason],
              ['message', s.message],
              ['stop signal', s.stopSignal],
            ]}
          />
        </Section>
        <Section title="Resources">
          <KeyValues rows={resourcesRows(s)} />
        </Section>
        <Section title="Security context (applied)">
          <KeyValues
            rows={[
              ['seccomp', <span data-testid="seccomp-profile">{s.seccomp || 'unconfined'}</span>],
              ['AppArmor', s.apparmor || 'none'],
              ['privileged', sc?.privileged ? 'yes' : 'no'],
              ['run as', sc?.run_as_user ? `uid ${sc.run_as_user.value}` : sc?.run_as_username || 'image user'],
              ['read-only rootfs', sc?.readonly_rootfs ? 'yes' : 'no'],
              ['no_new_privs', sc?.no_new_privs ? 'yes' : 'no'],
              ['capabilities added', caps?.add_capabilities.join(' ') || ''],
              ['capabilities dropped', caps?.drop_capabilities.join(' ') || ''],
              ['masked paths', sc?.masked_paths.length ? `${sc.masked_paths.length} paths` : 'runtime default'],
            ]}
          />
        </Section>
      </div>
      <Section title="Create and start, step by step">
        {s.trace.length === 0 ? (
          <span className="muted">No steps recorded (a container created by an engine older than this one, or another runtime).</span>
        ) : (
          <div className="stack" data-testid="container-steps">
            {[...new Set(s.trace.map((t) => t.phase))].map((p) => (
              <Phase key={p} phase={p} entries={s.trace.filter((t) => t.phase === p)} />
            ))}
          </div>
        )}
      </Section>
      <Section title={`Mounts (${s.mounts.length})`}>
        {s.mounts.length === 0 ? (
          <span className="muted">No mounts beyond the runtime's defaults (/proc, /dev, /sys, /etc/hosts, /etc/resolv.conf).</span>
        ) : (
          <table className="table" aria-label="Mounts">
            <thead>
              <tr>
                <th>Container path</th>
                <th>Host path</th>
                <th>Mode</th>
                <th>Propagation</th>
              </tr>
            </thead>
            <tbody>
              {s.mounts.map((m) => (
                <tr key={m.container_path}>
                  <td className="mono">{m.container_path}</td>
                  <td className="mono">{m.host_path}</td>
                  <td>{m.readonly ? 'ro' : 'rw'}</td>
                  <td>{PROPAGATION[m.propagation] ?? m.propagation}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      <Section title="Labels and annotations">
        <KeyValues
          mono={false}
          rows={[
            ['labels', <LabelChips map={s.labels} />],
            ['annotations', <LabelChips map={s.annotations} />],
          ]}
        />
      </Section>
      {s.lastError && (
        <Section title="Last error">
          <JsonView value={s.lastError} />
        </Section>
      )}
    </div>
  );
}
