// Every code the library can produce is documented in the README, and everything the README lists
// as a code still exists (both directions, as fastify's error catalogue test does).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPILER_DIAGNOSTIC_CODES } from './diagnostics';
import type { FindingCode } from './explain';
import type { SimulatorErrorCode } from './simulate/errors';

const README = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
const FINDINGS: Record<FindingCode, true> = {
  ALLOW_DENIES_UNMATCHED: true,
  ALLOW_NOTHING: true,
  TCP_DENY_MATCHES_ALL: true,
  TCP_ALLOW_EMPTY: true,
  DRY_RUN: true,
  STRICT_RESETS_PLAINTEXT: true,
  DISABLE_PLAINTEXT: true,
  CUSTOM_EXT_AUTHZ: true,
};
const SIMULATOR: Record<SimulatorErrorCode, true> = { ERR_MESH_SIM_INVALID_TRAFFIC: true, ERR_MESH_SIM_UNSUPPORTED_MATCHER: true };
const ALL = [...COMPILER_DIAGNOSTIC_CODES, ...Object.keys(FINDINGS), ...Object.keys(SIMULATOR)];

describe('code catalogue', () => {
  it('documents every code in the README', () => {
    expect(ALL.filter((code) => !README.includes(`\`${code}\``))).toEqual([]);
  });
  it('documents no code that does not exist', () => {
    const documented = [...README.matchAll(/`((?:COMPILE|ERR_MESH_SIM)_[A-Z_]+|[A-Z]+(?:_[A-Z]+)+)`/gu)].map((m) => m[1] ?? '');
    const NOT_CODES = new Set(['COMPILE_LIMITS']);
    const codeLike = documented.filter((c) => !NOT_CODES.has(c) && (c.startsWith('COMPILE_') || c.startsWith('ERR_MESH_SIM_') || c in FINDINGS));
    expect(codeLike.filter((code) => !ALL.includes(code))).toEqual([]);
  });
});
