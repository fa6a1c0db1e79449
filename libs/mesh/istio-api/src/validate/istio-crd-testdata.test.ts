/**
 * Istio's own CRD validation cases (pkg/config/validation/testdata/crds): every valid document
 * passes, every invalid one is rejected. Istio's test only asserts that the webhook and the API
 * server agree on rejecting; here each case also pins the message ward gives.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadResources, validateResources } from '../index';
import type { Diagnostic } from '../index';

const DIR = join(__dirname, '..', '..', 'testdata', 'validation');

interface Case {
  readonly name: string;
  readonly apiServerMessage: string;
  readonly text: string;
}

/** Splits a file into documents and pulls out the `_err:` line (the API server's message). */
function cases(file: string): Case[] {
  return readFileSync(join(DIR, file), 'utf8')
    .split(/^---$/m)
    .map((text) => {
      const match = /^_err: (.*)$/m.exec(text);
      const apiServerMessage = match === null ? '' : (match[1] ?? '').replace(/^'(.*)'$/, '$1');
      const name = /^ {2}name: (.*)$/m.exec(text)?.[1] ?? '';
      // Blank the `_err` line rather than delete it, so line numbers stay those of the file.
      return { name, apiServerMessage, text: text.replace(/^_err: .*$/m, '') };
    });
}

function diagnosticsOf(text: string): Diagnostic[] {
  const loaded = loadResources(text, { sourceName: 'crd.yaml' });
  return [...loaded.diagnostics, ...validateResources(loaded.resources)];
}

describe.each(['authz-valid.yaml', 'peerauth-valid.yaml'])('%s', (file) => {
  it.each(cases(file).map((c) => [c.name, c] as const))('%s is valid', (_name, { text }) => {
    expect(diagnosticsOf(text).filter((d) => d.severity === 'error')).toEqual([]);
  });
});

/** API server message (from `_err`) → the code and message ward reports for the same document. */
const EXPECTED: Record<string, [string, string]> = {
  'service-account-and-namespace': ['AP_SERVICE_ACCOUNTS_WITH_NAMESPACES_OR_PRINCIPALS', 'cannot set serviceAccounts with namespaces or principals, found at rule 0'],
  'service-account-and-namespace-principal': ['AP_SERVICE_ACCOUNTS_WITH_NAMESPACES_OR_PRINCIPALS', 'cannot set serviceAccounts with namespaces or principals, found at rule 0'],
  'bad-mode': ['MESH_UNKNOWN_ENUM_VALUE', 'spec.mtls.mode: unknown value "BLAH" for enum istio.security.v1beta1.PeerAuthentication.MutualTLS.Mode; expected one of UNSET, DISABLE, PERMISSIVE, STRICT'],
  'bad-port': ['MESH_BAD_MAP_KEY', 'spec.portLevelMtls: key "acd" is not an unsigned 32-bit integer'],
  'port-level-global': ['PA_PORT_LEVEL_WITHOUT_SELECTOR', 'mesh/namespace peer authentication cannot have port level mTLS'],
  'empty-port-level': ['PA_PORT_LEVEL_EMPTY', 'port level mTLS, if defined, must have at least one element'],
  'zero-port': ['PA_PORT_OUT_OF_RANGE', 'port must be in range 1..65535'],
  'high-port': ['PA_PORT_OUT_OF_RANGE', 'port must be in range 1..65535'],
};

describe.each(['authz-invalid.yaml', 'peerauth-invalid.yaml'])('%s', (file) => {
  it.each(cases(file).map((c) => [c.name, c] as const))('%s is rejected', (name, { text, apiServerMessage }) => {
    expect(apiServerMessage).not.toBe('');
    const errors = diagnosticsOf(text).filter((d) => d.severity === 'error');
    const expected = EXPECTED[name];
    expect(expected).toBeDefined();
    expect(errors.map((d) => [d.code, d.message])).toEqual([expected]);
    expect(errors[0]?.position?.line).toBeGreaterThan(1);
  });
});
