import { describe, expect, it } from 'vitest';
import { goTogether } from './together';

describe('goTogether', () => {
  it('accepts all or none, and names every setting when only some are set', () => {
    expect(goTogether({ A_FILE: '', B_FILE: '', C_FILE: '' })).toBeUndefined();
    expect(goTogether({ A_FILE: '/a', B_FILE: '/b', C_FILE: '/c' })).toBeUndefined();
    expect(goTogether({ A_FILE: '/a', B_FILE: '', C_FILE: '/c' })).toBe('A_FILE, B_FILE and C_FILE go together');
    expect(goTogether({ A_FILE: '', B_FILE: '/b' })).toBe('A_FILE and B_FILE go together');
  });
});
