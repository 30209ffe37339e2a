import { describe, expect, it } from 'vitest';
import { matchesSelector, parseLabelSelector, type SelectorRequirement } from '../../shared/domain/label-selector';

function reqs(s: string): SelectorRequirement[] {
  const p = parseLabelSelector(s);
  if (!p.ok) throw new Error(`${s}: ${p.error}`);
  return p.requirements;
}
const match = (labels: Record<string, string>, s: string) => matchesSelector(labels, reqs(s));

describe('Kubernetes label selector syntax (apimachinery labels.Parse)', () => {
  it('parses every operator kubectl -l accepts', () => {
    expect(reqs('')).toEqual([]);
    expect(reqs('env')).toEqual([{ key: 'env', operator: 'exists', values: [] }]);
    expect(reqs('!tier')).toEqual([{ key: 'tier', operator: 'notExists', values: [] }]);
    expect(reqs('a=b,c!=d')).toEqual([
      { key: 'a', operator: 'equals', values: ['b'] },
      { key: 'c', operator: 'notEquals', values: ['d'] },
    ]);
    expect(reqs('a==b')).toEqual([{ key: 'a', operator: 'equals', values: ['b'] }]);
    expect(reqs(' app in ( web , api ) ')).toEqual([{ key: 'app', operator: 'in', values: ['web', 'api'] }]);
    expect(reqs('tier notin (x)')).toEqual([{ key: 'tier', operator: 'notIn', values: ['x'] }]);
    expect(reqs('example.com/team=net')).toEqual([{ key: 'example.com/team', operator: 'equals', values: ['net'] }]);
    expect(reqs('replicas>2')).toEqual([{ key: 'replicas', operator: 'gt', values: ['2'] }]);
    // an empty value is a value ("a=" selects a="" only)
    expect(reqs('a=')).toEqual([{ key: 'a', operator: 'equals', values: [''] }]);
  });

  it('matches like Kubernetes: != and notin also select pods without the key', () => {
    const web = { app: 'web', tier: 'fe', env: 'prod' };
    const bare = {};
    expect(match(web, 'app in (web,api)')).toBe(true);
    expect(match(web, 'app in (api)')).toBe(false);
    expect(match(web, '!tier')).toBe(false);
    expect(match(bare, '!tier')).toBe(true);
    expect(match(web, 'tier notin (x)')).toBe(true);
    expect(match(bare, 'tier notin (x)')).toBe(true);
    expect(match(bare, 'a!=b')).toBe(true);
    expect(match(bare, 'env')).toBe(false);
    expect(match(web, 'env,app=web,tier!=be')).toBe(true);
    expect(match({ n: '3' }, 'n>2')).toBe(true);
    expect(match({ n: 'x' }, 'n>2')).toBe(false);
    expect(match({ a: '' }, 'a=')).toBe(true);
  });

  it('reports syntax errors with their position instead of matching nothing silently', () => {
    const bad = (s: string) => {
      const p = parseLabelSelector(s);
      expect(p.ok, s).toBe(false);
      return p.ok ? { error: '', position: -1 } : p;
    };
    expect(bad('app in (web,api')).toMatchObject({ error: 'missing ")" to close the "in" list', position: 15 });
    expect(bad('app in web')).toMatchObject({ error: '"in" needs a parenthesised list, e.g. in (a,b)' });
    expect(bad('app ~ web').error).toMatch(/unknown operator "~"|expected "," between/);
    expect(bad('a b').error).toBe('unknown operator "b" after "a"; use =, ==, !=, in, notin, > or <');
    expect(bad('!a=b').error).toBe('"!a" takes no operator; found "="');
    expect(bad('a=b,').error).toBe('expected a label key at the end');
    expect(bad('-a=b').error).toMatch(/must start and end with a letter or digit/);
    expect(bad('a=has space').error).toMatch(/unknown operator|expected "," between requirements, found "space"/);
    expect(bad(`a=${'v'.repeat(64)}`).error).toMatch(/longer than 63/);
    expect(bad('n>x').error).toBe('">" needs an integer, got "x"');
  });
});
