/** One lab run: the per-plugin trace (live while it runs), the final result, the kernel state created, the verdict. */
import { Fragment } from 'react';
import type { LabKernelItem, LabPluginTrace, LabProbe, LabRun } from '../../../../../shared/domain/lab';
import { measuredByText } from '../../../../../shared/domain/probe';
import { byteSize, ms, prettyJson } from '../../../lib/format';
import { kernelFactText } from '../model/kernel-text';
import { linkMtuRows } from '../model/link-mtu';
import { ChangeList } from './ChangeList';
import { JsonView } from '../../../lib/ui/JsonView';
import { Pill } from '../../../lib/ui/StatusPill';

/** the probe step in the trace: after ADD and CHECK, before DEL; each path with its verdict and round trip */
export function ProbeTraceItem({ probe, skipped }: { probe?: LabProbe; skipped?: string }) {
  if (!probe)
    return (
      <li className="tl-item" data-testid="lab-probe">
        <div className="lab-trace-head">
          <Pill tone="muted">PROBE</Pill>
          <span className="muted small">skipped: {skipped}</span>
        </div>
      </li>
    );
  const failing = probe.paths.filter((p) => p.verdict !== 'reachable' && p.verdict !== 'notApplicable').length;
  return (
    <li className={probe.ok ? 'tl-item' : 'tl-item tl-fail'} data-testid="lab-probe">
      <details open>
        <summary className="lab-trace-head">
          <Pill tone={probe.ok ? 'ok' : 'bad'}>PROBE</Pill>
          <span className={probe.ok ? 'small' : 'small text-bad'} data-testid="lab-probe-verdict">
            {probe.ok
              ? `reachable: ${probe.paths.filter((p) => p.verdict === 'reachable').length} path${probe.paths.length === 1 ? '' : 's'}`
              : `${failing || probe.errors.length} failing`}
          </span>
          <span className="muted small">
            measured {new Date(probe.measuredAt).toLocaleTimeString()} by {measuredByText(probe)}
          </span>
          <span className="mono muted small">{ms(probe.durationMs)}</span>
        </summary>
        <div className="lab-trace-body">
          <table className="table lab-probe-paths">
            <tbody>
              {probe.paths.map((p, n) => (
                <tr key={n}>
                  <td className="mono small muted">{p.kind}</td>
                  <td className="mono small">
                    {p.from} → {p.to}/{p.proto}
                  </td>
                  <td>
                    <Pill tone={p.verdict === 'reachable' ? 'ok' : p.verdict === 'notApplicable' ? 'muted' : 'bad'}>{p.verdict}</Pill>
                  </td>
                  <td className="mono small muted">{p.rttMs !== undefined ? ms(p.rttMs) : p.measured ? '' : 'not measured'}</td>
                  <td className="small muted">{p.note}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {probe.errors.map((e) => (
            <div key={e} className="small text-bad">
              {e}
            </div>
          ))}
        </div>
      </details>
    </li>
  );
}

/** a CHECK failing with a known defect of the plugin's release: a warning (amber), not the network's failure */
function knownDefect(p: LabPluginTrace): boolean {
  return !p.ok && (p.error?.details as { knownDefect?: unknown } | undefined)?.knownDefect !== undefined;
}

export function PluginTrace({ plugins, probe, probeSkipped }: { plugins: LabPluginTrace[]; probe?: LabProbe; probeSkipped?: string }) {
  const showProbe = probe !== undefined || probeSkipped !== undefined;
  // the probe ran after ADD and CHECK, so it goes before the first DEL (or at the end while DEL has not started)
  const firstDel = plugins.findIndex((p) => p.phase === 'DEL');
  const probeAt = firstDel === -1 ? plugins.length : firstDel;
  return (
    <ol className="timeline" data-testid="lab-trace">
      {plugins.map((p, n) => (
        <Fragment key={n}>
          {showProbe && n === probeAt && <ProbeTraceItem probe={probe} skipped={probeSkipped} />}
          <li className={p.ok || knownDefect(p) ? 'tl-item' : 'tl-item tl-fail'} data-known-defect={knownDefect(p) ? 'true' : undefined}>
            <details>
              <summary className="lab-trace-head">
                <Pill tone={p.phase === 'ADD' ? 'info' : p.phase === 'CHECK' ? 'muted' : 'warn'}>{p.verb}</Pill>
                <span className="mono tl-plugin">{p.type}</span>
                <span className="mono muted small">#{p.index}</span>
                <span className={p.ok ? 'mono small' : knownDefect(p) ? 'mono small text-warn' : 'mono small text-bad'}>
                  exit {p.exitCode ?? '—'}
                </span>
                <span className="mono muted small">{ms(p.durationMs)}</span>
                {!p.ok && knownDefect(p) && <Pill tone="warn">known defect</Pill>}
                {p.pastKnownDefectOf !== undefined && (
                  <Pill tone="muted" title="libcni stops at the first failing plugin; Podscope checks the rest past a known defect">
                    checked past #{p.pastKnownDefectOf}&apos;s known defect
                  </Pill>
                )}
                {!p.ok && (
                  <span className={`${knownDefect(p) ? 'text-warn' : 'text-bad'} small lab-trace-error`}>
                    {p.error?.message ?? p.stderr}
                  </span>
                )}
              </summary>
              <div className="lab-trace-body">
                <div className="muted small mono">{p.binary ?? 'binary not found'}</div>
                <div className="lab-cols">
                  <div>
                    <div className="small muted">stdin</div>
                    <pre className="code">{prettyJson(p.stdin)}</pre>
                  </div>
                  <div>
                    <div className="small muted">stdout</div>
                    <pre className="code">{p.stdout ? prettyJson(p.stdout) : '(empty)'}</pre>
                    {p.stderr && (
                      <>
                        <div className="small muted">stderr</div>
                        <pre className="code">{p.stderr}</pre>
                      </>
                    )}
                  </div>
                </div>
              </div>
            </details>
          </li>
        </Fragment>
      ))}
      {showProbe && probeAt === plugins.length && <ProbeTraceItem probe={probe} skipped={probeSkipped} />}
    </ol>
  );
}

export function KernelList({ items, empty }: { items: Array<LabKernelItem & { why?: string }>; empty: string }) {
  if (items.length === 0) return <div className="muted small">{empty}</div>;
  return (
    <table className="table lab-kernel">
      <tbody>
        {items.map((i, n) => (
          <tr key={n}>
            <td className="mono muted small">{i.kind}</td>
            <td className="mono small">{kernelFactText(i.kind, i.what)}</td>
            {i.why !== undefined && <td className="muted small">{i.why}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Every link the run created with its MTU; a host link narrower than the run's interface is marked, with why. */
export function LinkMtus({ run }: { run: Pick<LabRun, 'linkMtus' | 'ifName'> }) {
  const { rows, interfaceMtu } = linkMtuRows(run);
  if (rows.length === 0) return <div className="muted small">no link read after ADD</div>;
  return (
    <table className="table lab-kernel" data-testid="lab-link-mtus">
      <tbody>
        {rows.map((l) => (
          <tr key={`${l.where}/${l.name}`} data-link={l.name} data-where={l.where} data-narrower={l.narrower ? 'true' : undefined}>
            <td className="mono muted small">{l.where === 'netns' ? "run's netns" : 'host'}</td>
            <td className="mono small">
              {l.name}
              {l.kind ? <span className="muted"> ({l.kind})</span> : null}
              {l.master ? <span className="muted"> port of {l.master}</span> : null}
              {l.runInterface && <span className="muted"> the run&apos;s interface</span>}
            </td>
            <td className={l.narrower ? 'mono small text-warn' : 'mono small'} data-testid="lab-link-mtu">
              MTU {l.mtu}
            </td>
            <td className="small">
              {l.narrower && (
                <span className="text-warn">
                  below the run&apos;s {run.ifName} ({interfaceMtu}): packets over {l.mtu} bytes vanish here without an ICMP
                  &quot;fragmentation needed&quot;
                </span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Verdict({ run }: { run: LabRun }) {
  const leaked = run.leftAfterDel.length;
  // a host value DEL did not put back (a link left DOWN, a sysctl reset) outlives the run like a leak
  const notPutBack = (run.changedAfterDel ?? []).filter((c) => c.where === 'host' && !c.why);
  const clean = leaked === 0 && notPutBack.length === 0;
  // values that still differ, but by the plugins' design or only inside the run's own netns (removed with it): the
  // verdict must not claim that nothing stayed changed while "Changed after DEL" lists them
  const stillDiffer = (run.changedAfterDel ?? []).filter((c) => c.where === 'netns' || c.why).length;
  return (
    <div className={clean ? 'callout callout-ok' : 'callout callout-bad'} data-testid="lab-verdict">
      <div className="callout-title">
        {leaked === 0
          ? notPutBack.length === 0
            ? stillDiffer === 0
              ? 'No leak: everything the run created is gone after DEL, and nothing it changed on the host stayed changed'
              : `No leak: everything the run created is gone after DEL; ${stillDiffer} value${stillDiffer === 1 ? '' : 's'} still differ${stillDiffer === 1 ? 's' : ''} by the plugins' design or inside the run's own netns (see "Changed after DEL")`
            : `Everything the run created is gone, but DEL did not put back ${notPutBack.length} value${notPutBack.length === 1 ? '' : 's'} it changed on the host`
          : `Leak: ${leaked} thing${leaked === 1 ? '' : 's'} left after DEL`}
      </div>
      {leaked > 0 && <KernelList items={run.leftAfterDel} empty="" />}
      {notPutBack.length > 0 && <ChangeList changes={notPutBack} testId="lab-verdict-changes" afterDel />}
      {run.keptByDesign.length > 0 && <div className="small muted">{run.keptByDesign.length} kept by the plugins' design (below)</div>}
    </div>
  );
}

export function RunView({ run }: { run: LabRun }) {
  return (
    <div className="stack" data-testid="lab-run">
      <header className="section-head">
        <strong className="mono">{run.id}</strong>
        {run.success ? <Pill tone="ok">success</Pill> : <Pill tone="bad">failed</Pill>}
        <Pill tone={run.addOk ? 'ok' : 'bad'}>ADD {run.addOk ? 'ok' : 'failed'}</Pill>
        {run.checkOk !== undefined ? (
          run.checkOk && run.checkKnownDefects?.length ? (
            <Pill
              tone="warn"
              title={run.checkKnownDefects.map((d) => `${d.type}#${d.index} ${d.version} (${d.reference}): ${d.explanation}`).join('\n')}
            >
              CHECK ok, with a known plugin defect
            </Pill>
          ) : (
            <Pill tone={run.checkOk ? 'ok' : 'bad'}>CHECK {run.checkOk ? 'ok' : 'failed'}</Pill>
          )
        ) : (
          <Pill tone="muted" title={run.checkSkipped}>
            CHECK skipped
          </Pill>
        )}
        {run.probe && <Pill tone={run.probe.ok ? 'ok' : 'bad'}>PROBE {run.probe.ok ? 'reachable' : 'failed'}</Pill>}
        {run.mtuWarnings?.length ? (
          <Pill tone="warn" title={run.mtuWarnings.join('\n')}>
            MTU warning
          </Pill>
        ) : null}
        <Pill tone={run.delOk ? 'ok' : 'bad'}>DEL {run.delOk ? 'ok' : 'failed'}</Pill>
        <span className="muted small">{ms(run.durationMs)}</span>
      </header>
      {run.recovered && (
        <div className="callout callout-warn small" data-testid="lab-recovered">
          <div className="callout-title">Interrupted run, torn down at start-up {run.recovered.at}</div>
          {run.recovered.actions.join('; ')}
        </div>
      )}
      {run.error && <div className="callout callout-bad mono small">{run.error.message}</div>}
      {run.checkKnownDefects?.map((d) => (
        <div key={d.index} className="callout callout-warn small" data-testid="lab-known-defect">
          <div className="callout-title">
            CHECK of {d.type}#{d.index} failed with a known defect of {d.type} {d.version}: the plugins after it were still checked
          </div>
          {d.explanation} (<span className="mono">{d.reference}</span>)
        </div>
      ))}
      {run.forced.length > 0 && (
        <div className="callout callout-warn small">Run with force over {run.forced.length} live sandbox(es) sharing this network.</div>
      )}
      <Verdict run={run} />
      {run.mtuWarnings?.map((w) => (
        <div key={w} className="callout callout-warn small" data-testid="lab-mtu-warning">
          <div className="callout-title">MTU: full-size packets from the pod would vanish on its path</div>
          {w}
        </div>
      ))}
      {run.delAfterFailedAdd && (
        <div className="callout small" data-testid="lab-del-after-failed-add">
          <div className="callout-title">
            DEL after the failed ADD{run.delAfterFailedAdd.failedType ? ` of ${run.delAfterFailedAdd.failedType}` : ''}: the whole list in
            reverse, as libcni and containerd do
          </div>
          {run.delAfterFailedAdd.neverAdded.map((n) => (
            <div key={n.index} className="mono">
              {n.type}#{n.index} DELed for an ADD it never saw: {n.ok ? 'succeeded' : `failed: ${n.error ?? ''}`}
            </div>
          ))}
          <div className="muted">{run.delAfterFailedAdd.engine}</div>
        </div>
      )}
      <section className="section">
        <div className="section-head">
          <strong>Plugin trace</strong>
        </div>
        <PluginTrace plugins={run.plugins} probe={run.probe} probeSkipped={run.probeSkipped} />
      </section>
      <section className="section">
        <div className="section-head">
          <strong>Final result</strong>
        </div>
        {run.rawResult !== undefined ? (
          <JsonView value={run.rawResult} />
        ) : (
          <div className="muted small">no result (ADD did not complete)</div>
        )}
      </section>
      <section className="section">
        <div className="section-head">
          <strong>Kernel state created</strong>
          <span className="muted small">{run.kernelCreated.length} facts</span>
        </div>
        <KernelList items={run.kernelCreated} empty="nothing" />
      </section>
      {run.linkMtus !== undefined && (
        <section className="section" data-testid="lab-links-mtu">
          <div className="section-head">
            <strong>Links created, with their MTU</strong>
            <span className="muted small">read from the kernel after ADD</span>
          </div>
          <LinkMtus run={run} />
        </section>
      )}
      {run.changedByAdd !== undefined && (
        <section className="section" data-testid="lab-changed-by-add">
          <div className="section-head">
            <strong>Changed in place by ADD</strong>
            <span className="muted small">sysctls and host links, before ADD → after ADD</span>
          </div>
          <ChangeList changes={run.changedByAdd} testId="lab-changes-add" />
        </section>
      )}
      {run.changedAfterDel !== undefined && (
        <section className="section" data-testid="lab-changed-after-del">
          <div className="section-head">
            <strong>Changed after DEL</strong>
            <span className="muted small">what differs from before ADD once DEL has run</span>
          </div>
          <ChangeList changes={run.changedAfterDel} testId="lab-changes-del" afterDel />
        </section>
      )}
      {run.keptByDesign.length > 0 && (
        <section className="section">
          <div className="section-head">
            <strong>Kept after DEL by design</strong>
          </div>
          <KernelList items={run.keptByDesign} empty="" />
        </section>
      )}
      <details>
        <summary className="small">plugin binaries</summary>
        <table className="table">
          <tbody>
            {run.versions.map((v) => (
              <tr key={v.path}>
                <td className="mono small">{v.type}</td>
                <td className="mono small">{v.path}</td>
                <td className="mono small muted">{v.sha256.slice(0, 16)}…</td>
                <td className="mono small muted">{byteSize(v.size)}</td>
                <td className="small muted">{v.mtime}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </div>
  );
}
