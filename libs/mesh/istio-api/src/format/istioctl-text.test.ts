import { describe, expect, it } from 'vitest';
import { formatValidateText, loadResources, validateResources } from '../index';
import type { InputReport } from '../index';

function report(sourceName: string, text: string): InputReport {
  const loaded = loadResources(text, { sourceName });
  return { sourceName, diagnostics: [...loaded.diagnostics, ...validateResources(loaded.resources)] };
}

const DENY_GET = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: deny-get
spec:
  action: DENY
  rules:
  - to:
    - operation:
        methods: ["GET"]
`;

const BAD = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: bad
  namespace: foo
spec:
  rules:
  - from:
    - source: {}
    - source: {ipBlocks: ["300.1.1.1"]}
`;

const DENY_WARNING =
  'configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port';

describe('istioctl validate text', () => {
  it('prints "is valid" for a clean file and "validation succeed" for stdin', () => {
    const ok = report('ok.yaml', DENY_GET.replace('methods: ["GET"]', 'ports: ["8080"]'));
    expect(formatValidateText([ok])).toEqual({ text: '"ok.yaml" is valid\n', failed: false });
    expect(formatValidateText([{ ...ok, sourceName: '-' }]).text).toBe('validation succeed\n');
  });

  it('prints warnings with an empty namespace segment and passes (istioctl exits 0)', () => {
    const result = formatValidateText([report('deny.yaml', DENY_GET)], { locations: false });
    expect(result).toEqual({ text: `"deny.yaml" has warnings: \n\t* AuthorizationPolicy//deny-get: ${DENY_WARNING}\n\n`, failed: false });
  });

  it('fails on warnings with strict', () => {
    expect(formatValidateText([report('deny.yaml', DENY_GET)], { strict: true }).failed).toBe(true);
  });

  it('prints errors as a Go multierror after the warnings, with the policy prefix', () => {
    const result = formatValidateText([report('deny.yaml', DENY_GET), report('bad.yaml', BAD)], { locations: false });
    expect(result.failed).toBe(true);
    expect(result.text).toBe(
      `"deny.yaml" has warnings: \n\t* AuthorizationPolicy//deny-get: ${DENY_WARNING}\n\n` +
        'Error: 2 errors occurred:\n' +
        '\t* AuthorizationPolicy/foo/bad: invalid policy bad.foo: `from.source` must not be empty, found at rule 0\n' +
        '\t* AuthorizationPolicy/foo/bad: invalid policy bad.foo: bad IP address (300.1.1.1)\n\n\n',
    );
  });

  it('appends file, line and field path by default', () => {
    const text = formatValidateText([report('bad.yaml', BAD)]).text;
    expect(text).toContain('found at rule 0 (at bad.yaml:9, spec.rules[0].from[0].source)\n');
    expect(text).toContain('bad IP address (300.1.1.1) (at bad.yaml:10, spec.rules[0].from[1].source.ipBlocks[0])\n');
  });

  it('renders decoding errors as istioctl does, and YAML errors with their line', () => {
    const unknown = report('u.yaml', BAD.replace('source: {}', 'source: {principal: [a]}'));
    expect(formatValidateText([unknown], { locations: false }).text).toContain(
      '* AuthorizationPolicy/foo/bad: cannot parse proto message: unknown field "principal" in istio.security.v1beta1.Source\n',
    );
    const broken = report('y.yaml', 'a: [1, 2\nb: c');
    expect(formatValidateText([broken], { locations: false }).text).toMatch(/^Error: 1 error occurred:\n\t\* failed to decode file y\.yaml: line 2: invalid YAML: /);
  });
});
