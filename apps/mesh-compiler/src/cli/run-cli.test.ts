// runCli, the CLI's core entry, in-process: usage errors, and a fuzz test over hostile command
// lines, files and stdin — it must always answer with an exit code and a diagnostic, never throw,
// never print a stack trace.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from './run-cli';

async function* stdinOf(data: Uint8Array | string): AsyncGenerator<Uint8Array | string> {
  yield data;
}

const run = (argv: string[], stdin: Uint8Array | string = '') => runCli(argv, { stdin: stdinOf(stdin) });

const DENY_ADMIN = 'apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: deny-admin, namespace: foo}\nspec:\n  action: DENY\n  rules: [{to: [{operation: {paths: ["/admin*"]}}]}]\n';
const WORKLOAD = ['--workload', 'foo/httpbin', '--labels', 'app=httpbin', '--ports', '8080/HTTP,9000/TCP'];

const root = mkdtempSync(join(tmpdir(), 'ward-mesh-fuzz-'));
const FILES = {
  policy: join(root, 'policy.yaml'),
  mesh: join(root, 'mesh.yaml'),
  binary: join(root, 'binary.yaml'),
  empty: join(root, 'empty.yaml'),
  fifo: join(root, 'fifo.yaml'),
  dir: join(root, 'dir'),
  missing: join(root, 'missing.yaml'),
};
writeFileSync(FILES.policy, DENY_ADMIN);
writeFileSync(FILES.mesh, 'extensionProviders:\n- name: authz\n  envoyExtAuthzGrpc: {service: authz.foo.svc.cluster.local, port: 9000}\n');
writeFileSync(FILES.binary, new Uint8Array([0x00, 0xff, 0x13, 0x37, 0xc3, 0x28]));
writeFileSync(FILES.empty, '');
execFileSync('mkfifo', [FILES.fifo]);
mkdirSync(join(FILES.dir, 'nested'), { recursive: true });
for (let index = 0; index < 40; index++) writeFileSync(join(FILES.dir, `p${index}.yaml`), DENY_ADMIN.replace('deny-admin', `deny-${index}`));
writeFileSync(join(FILES.dir, 'nested', 'bad.json'), '{"apiVersion": [');

describe('runCli usage errors', () => {
  it.each([
    [['explain', '-', ...WORKLOAD, '--expect', 'maybe'], '--expect: expected allow, deny or reset, got "maybe"'],
    [['validate', '-', '--expect', 'allow'], '--expect is a flag of explain'],
    [['validate', '-', '--mesh-config', FILES.mesh], '--mesh-config is a flag of compile and explain'],
    [['compile', '-', ...WORKLOAD, '--mesh-config', '-'], '--mesh-config needs a file'],
    [['explain', '-', ...WORKLOAD, '--ext-authz', 'sometimes'], '--ext-authz: expected allow or deny, got "sometimes"'],
  ])('%j is a usage error (exit 2)', async (argv, message) => {
    const result = await run(argv, DENY_ADMIN);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`ward-mesh: ${message}`);
  });

  it('an unreadable mesh config is an input error (exit 1) with its path', async () => {
    for (const path of [FILES.missing, FILES.dir, FILES.fifo, FILES.binary]) {
      const result = await run(['compile', '-', ...WORKLOAD, '--mesh-config', path], DENY_ADMIN);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain(`${path}:1: error [MESH_INPUT_UNREADABLE]`);
    }
  });
});

const policyYaml = fc
  .record({
    action: fc.constantFrom('ALLOW', 'DENY', 'AUDIT', 'CUSTOM', 'BOGUS', 7),
    paths: fc.array(fc.constantFrom('/admin*', '*', '/a/{*}', '', '/x', 42), { maxLength: 3 }),
    principals: fc.array(fc.constantFrom('cluster.local/ns/a/sa/b', '*', 'spiffe://x', ''), { maxLength: 2 }),
    ports: fc.array(fc.constantFrom('8080', 'x', '70000'), { maxLength: 2 }),
    when: fc.array(fc.record({ key: fc.constantFrom('request.headers[x]', 'source.ip', 'bogus', ''), values: fc.array(fc.constantFrom('a', '10.0.0.0/8', '', '*'), { maxLength: 2 }) }), { maxLength: 2 }),
    provider: fc.option(fc.constantFrom('authz', 'missing'), { nil: undefined }),
    kind: fc.constantFrom('AuthorizationPolicy', 'PeerAuthentication', 'Pod', 'Unknown'),
  })
  .map((p) =>
    stringify({
      apiVersion: 'security.istio.io/v1',
      kind: p.kind,
      metadata: { name: 'p', namespace: 'foo' },
      spec:
        p.kind === 'PeerAuthentication'
          ? { mtls: { mode: p.action === 'DENY' ? 'STRICT' : 'PERMISSIVE' }, portLevelMtls: { 9000: { mode: 'DISABLE' } } }
          : {
              action: p.action,
              ...(p.provider === undefined ? {} : { provider: { name: p.provider } }),
              rules: [{ from: [{ source: { principals: p.principals } }], to: [{ operation: { paths: p.paths, ports: p.ports } }], when: p.when }],
            },
    }),
  );

/** A YAML text with random characters spliced in. */
const mutatedYaml = fc.tuple(policyYaml, fc.array(fc.tuple(fc.nat(), fc.constantFrom('[', '{', ':', '-', '\t', '\0', '&a', '*a', '"', "'", '\n  ', '---\n', '#', '!!binary ', '|\n')), { maxLength: 6 })).map(([text, edits]) =>
  edits.reduce((current, [at, insert]) => {
    const index = current.length === 0 ? 0 : at % current.length;
    return current.slice(0, index) + insert + current.slice(index);
  }, text),
);

const stdinArbitrary: fc.Arbitrary<Uint8Array | string> = fc.oneof(
  fc.uint8Array({ maxLength: 2_000 }),
  fc.string({ maxLength: 500, unit: 'binary' }),
  policyYaml,
  mutatedYaml,
  fc.constantFrom('['.repeat(100_000), '{a: '.repeat(50_000), 'a: &a [*a]', '\uFEFFkind: x', `${'- '.repeat(200)}x`, '---\n'.repeat(5_000), 'x'.repeat(5 * 1024 * 1024)),
);

/** Flags with values that parse and values that should not. */
const FLAG_VALUES: ReadonlyArray<[string, readonly string[], readonly string[]]> = [
  ['--workload', ['foo/httpbin'], ['bad', 'a/b/c', '', 'FOO/x']],
  ['--labels', ['app=httpbin', 'a=b,c'], ['=x', ',,,']],
  ['--ports', ['8080/HTTP,9000/TCP', '7070', '8080/GRPC,9090/TLS'], ['99999', '8080/BOGUS', '']],
  ['--port', ['8080', '9000', '7777'], ['0', 'x']],
  ['--tls', ['mtls', 'plaintext', 'tls'], ['ssl']],
  ['--path', ['/', '/admin/x', '/a/../admin', '/%00', `/${'a'.repeat(70_000)}`], ['x']],
  ['--method', ['GET', 'POST', '', 'P\nOST'], []],
  ['--header', ['a=b', 'x-forwarded-for=1.2.3.4, ::1', 'x-forwarded-for=not-an-ip'], ['x']],
  ['--source-principal', ['cluster.local/ns/a/sa/b', '', 'spiffe://x/y'], []],
  ['--source-ip', ['10.0.0.9', '::1', 'not-an-ip'], []],
  ['--expect', ['allow', 'deny', 'reset'], ['maybe']],
  ['--ext-authz', ['allow', 'deny'], ['x']],
  ['--mesh-config', [FILES.mesh, FILES.dir, FILES.missing, FILES.binary, FILES.fifo, FILES.policy], ['-']],
  ['--trust-domain', ['td', ''], ['a/b']],
  ['--root-namespace', ['istio-system', ''], []],
  ['-o', ['json', 'yaml', 'text'], ['xml']],
  ['-n', ['default', 'Bad_NS'], []],
];
const BOOLEAN_FLAGS = ['--strict', '--analyze', '--advice', '--compat', '--strict', '--advice', '--help', '--no-such-flag'];

/** Mostly values that parse, sometimes not: most runs get past argument parsing. */
const flagArbitrary = fc.constantFrom(...FLAG_VALUES).chain(([flag, valid, invalid]) =>
  (invalid.length === 0 ? fc.constantFrom(...valid) : fc.oneof({ arbitrary: fc.constantFrom(...valid), weight: 6 }, { arbitrary: fc.constantFrom(...invalid), weight: 1 })).map((value) => [flag, value]),
);

const argvArbitrary = fc
  .tuple(
    fc.oneof({ arbitrary: fc.constantFrom('validate', 'compile', 'explain'), weight: 12 }, { arbitrary: fc.constantFrom('help', 'bogus'), weight: 1 }),
    fc.array(fc.oneof({ arbitrary: fc.constantFrom('-', FILES.policy, FILES.dir), weight: 4 }, { arbitrary: fc.constantFrom(FILES.binary, FILES.empty, FILES.fifo, FILES.missing), weight: 1 }), { minLength: 1, maxLength: 3 }),
    fc.array(flagArbitrary, { maxLength: 5 }),
    fc.array(fc.constantFrom(...BOOLEAN_FLAGS), { maxLength: 1 }),
    fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 }),
  )
  .map(([command, inputs, flags, booleans, withWorkload]) => [command, ...inputs, ...(withWorkload ? WORKLOAD : []), ...flags.flat(), ...booleans]);

const STACK_TRACE = /\n\s+at \S.*(?:\(|:\d+:\d+)/u;

describe('runCli under fuzzing', () => {
  it('always answers 0, 1 or 2 with plain-text diagnostics, never throws and never prints a stack trace', async () => {
    await fc.assert(
      fc.asyncProperty(argvArbitrary, stdinArbitrary, async (argv, stdin) => {
        const result = await run(argv, stdin);
        expect([0, 1, 2]).toContain(result.exitCode);
        expect(typeof result.stdout).toBe('string');
        expect(result.stderr).not.toMatch(STACK_TRACE);
        if (result.exitCode === 2) expect(result.stderr).toMatch(/^ward-mesh: /u);
        if (result.exitCode === 1) expect(result.stderr.length + result.stdout.length).toBeGreaterThan(0);
      }),
      { numRuns: 400, seed: 20_260_807, endOnFailure: true },
    );
  }, 120_000);
});
