import { describe, expect, it } from 'vitest';
import { checkRaceHistory, type RaceWrite } from './revoke-race';

const ok = (key: string, revision: number): RaceWrite => ({ key, result: 'ok', revision });
const refused = (key: string): RaceWrite => ({ key, result: 'refused', code: 7, details: 'etcdserver: permission denied' });

describe('checkRaceHistory', () => {
  const clean = {
    writes: [ok('race/0/0', 10), ok('race/0/1', 12), refused('race/0/2'), refused('race/0/3')],
    revokeRevision: 12,
    stored: new Map([
      ['race/0/0', 10],
      ['race/0/1', 12],
    ]),
  };

  it('accepts a history where every write after the revoke was refused', () => {
    expect(checkRaceHistory(clean)).toEqual([]);
  });

  it('flags a write acknowledged after the revoke (injected bug)', () => {
    const history = { ...clean, writes: [...clean.writes, ok('race/1/0', 13)], stored: new Map([...clean.stored, ['race/1/0', 13]]) };
    const violations = checkRaceHistory(history);
    expect(violations).toContain('race/1/0 acknowledged at revision 13 after the revoke at 12');
    expect(violations).toContain('race/1/0 stored at revision 13 after the revoke at 12');
  });

  it('flags a refused write that was applied anyway', () => {
    const history = { ...clean, revokeRevision: 20, stored: new Map([...clean.stored, ['race/0/2', 14]]) };
    expect(checkRaceHistory(history)).toEqual(['race/0/2 was refused but is stored']);
  });

  it('flags an acknowledged write that is missing or moved', () => {
    expect(checkRaceHistory({ ...clean, stored: new Map([['race/0/1', 12]]) })).toEqual(['race/0/0 acknowledged but not stored']);
    expect(checkRaceHistory({ ...clean, stored: new Map([['race/0/0', 10], ['race/0/1', 11]]) })).toEqual(['race/0/1 acknowledged at 12 but stored at 11']);
  });

  it('tolerates an ambiguous write either way, but not after the revoke', () => {
    const unknown: RaceWrite = { key: 'race/2/0', result: 'unknown', code: 4 };
    expect(checkRaceHistory({ ...clean, writes: [...clean.writes, unknown] })).toEqual([]);
    expect(checkRaceHistory({ ...clean, writes: [...clean.writes, unknown], stored: new Map([...clean.stored, ['race/2/0', 11]]) })).toEqual([]);
    expect(checkRaceHistory({ ...clean, writes: [...clean.writes, unknown], stored: new Map([...clean.stored, ['race/2/0', 15]]) })).toHaveLength(1);
  });
});
