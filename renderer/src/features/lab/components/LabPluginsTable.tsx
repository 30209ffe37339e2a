/** The plugins of the conflist as validated: which binary would run and what each was checked against. */
import type { LabValidation } from '../../../../../shared/domain/lab';

export function LabPluginsTable({ plugins }: { plugins: LabValidation['plugins'] }) {
  if (plugins.length === 0) return null;
  return (
    <table className="table" data-testid="lab-plugins">
      <thead>
        <tr>
          <th>#</th>
          <th>type</th>
          <th>binary</th>
          <th>checked with</th>
        </tr>
      </thead>
      <tbody>
        {plugins.map((p) => (
          <tr key={p.index}>
            <td className="mono muted">{p.index}</td>
            <td className="mono">
              <b>{p.type}</b>
            </td>
            <td className="mono small">{p.binary ?? <span className="text-bad">not found in bin dirs</span>}</td>
            <td className="mono small muted">{p.schema ?? 'envelope only'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
