// The client URL as a client that nobody here wrote sees it, against ward and against real etcd
// 3.4.23 side by side: curl transcripts (/version, /health, a watch receiving three events and
// then closed, a keep-alive stream, unknown routes, CORS, a denied watch and keep-alive streams with auth on), Debian's
// python3-etcd3gw (the JSON gateway, on the gRPC port's URL) and python3-etcd3 (gRPC) running the
// same script with equal normalised results, and a client that only knows the URL MemberList
// gives it, over either protocol.
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEtcdCluster, type EtcdCluster } from '@ward/testing/etcd-harness';
import { etcdTestClient, type EtcdTestClient } from '../src/testing/etcd-client';
import { startWardCluster, type WardCluster } from './support/ward-cluster';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const SCRIPTS = join(import.meta.dirname, 'python');

let ward: WardCluster;
let etcd: EtcdCluster;
/** The client URL of each, e.g. http://127.0.0.1:2379. */
const urls: Record<'ward' | 'etcd', string> = { ward: '', etcd: '' };
const TARGETS = ['ward', 'etcd'] as const;
type TargetName = (typeof TARGETS)[number];

interface CurlAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** `curl -i` with the given arguments; the last response's status, headers (lower-cased) and body. */
async function curl(args: readonly string[]): Promise<CurlAnswer> {
  const { stdout } = await run('curl', ['-s', '-i', '--max-time', '20', ...args], { maxBuffer: 16 * 1024 * 1024 });
  const split = stdout.indexOf('\r\n\r\n');
  const head = stdout.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(head[0]!.split(' ')[1]), headers, body: stdout.slice(split + 4) };
}

/** The answer without what differs by nature (date, server-specific headers): status, chosen headers, body. */
function transcript(answer: CurlAnswer, headerNames: readonly string[]): { status: number; headers: Record<string, string | undefined>; body: string } {
  return { status: answer.status, headers: Object.fromEntries(headerNames.map((name) => [name, answer.headers[name]])), body: answer.body };
}

const CORS = ['access-control-allow-headers', 'access-control-allow-methods', 'access-control-allow-origin'];

/** A result line with the values that differ between servers (IDs, terms, revisions) replaced. */
function normaliseLine(line: string): unknown {
  return JSON.parse(line, (key, value: unknown) => (['cluster_id', 'member_id', 'raft_term', 'revision', 'create_revision', 'mod_revision', 'ID'].includes(key) ? '<varies>' : value));
}

/**
 * `curl -N` streaming a POST: resolves with the first `lines` lines of its output, then closes
 * the connection (the client cancels by closing) — or, with `lines` undefined, with all of it.
 */
function curlStream(url: string, body: string, lines: number | undefined, headers: readonly string[] = []): { output: Promise<string[]>; started: Promise<void> } {
  const child = spawn('curl', ['-s', '-N', '--max-time', '30', '-X', 'POST', ...headers.flatMap((h) => ['-H', h]), url, '--data-binary', '@-'], { stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.end(body);
  let text = '';
  let onFirst: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (onFirst = resolve));
  const output = new Promise<string[]>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      onFirst();
      const got = text.split('\n').filter((line) => line !== '');
      if (lines !== undefined && got.length >= lines) {
        child.kill('SIGTERM');
        resolve(got.slice(0, lines));
      }
    });
    child.on('close', () => {
      onFirst();
      resolve(text.split('\n').filter((line) => line !== ''));
    });
  });
  return { output, started };
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');

async function postJson(target: TargetName, path: string, body: object, token?: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${urls[target]}${path}`, { method: 'POST', body: JSON.stringify(body), headers: token === undefined ? {} : { authorization: token } });
  return (await response.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  [ward, etcd] = await Promise.all([startWardCluster(), startEtcdCluster({ members: 1, bcryptCost: 4 })]);
  urls.ward = ward.gateways[0]!.advertisedClientUrl;
  urls.etcd = etcd.members[0]!.clientUrl;
}, 180_000);

afterAll(async () => {
  await Promise.allSettled([ward?.stop(), etcd?.stop()]);
});

describe('the client URL over HTTP/1.1, as etcd 3.4.23 serves it', () => {
  it('GET /version: etcd\'s shape and content type, ward reporting the version its Status reports', async () => {
    const [wardAnswer, etcdAnswer] = await Promise.all(TARGETS.map((t) => curl([`${urls[t]}/version`])));
    expect(Object.keys(JSON.parse(etcdAnswer!.body) as object)).toEqual(['etcdserver', 'etcdcluster']);
    const version = JSON.parse(wardAnswer!.body) as { etcdserver: string; etcdcluster: string };
    const status = (await postJson('ward', '/v3/maintenance/status', {})) as { version: string };
    expect(version).toEqual({ etcdserver: status.version, etcdcluster: status.version.replace(/^(\d+\.\d+)\..*$/, '$1.0') });
    expect(transcript(wardAnswer!, [...CORS, 'content-type']).headers).toEqual(transcript(etcdAnswer!, [...CORS, 'content-type']).headers);
    expect(wardAnswer!.status).toBe(200);
  });

  it('GET /health, unknown routes, a wrong method and a CORS preflight answer as etcd answers them', async () => {
    const requests: ReadonlyArray<readonly string[]> = [
      ['/health'],
      ['/nope'],
      ['/v3/nope', '-X', 'POST', '-d', '{}'],
      ['/v3beta/nope', '-X', 'POST', '-d', '{}'],
      ['/v3/kv/range'],
      ['/v3/kv/range', '-X', 'OPTIONS', '-H', 'Origin: http://example.com'],
    ];
    for (const [path, ...args] of requests) {
      const [wardAnswer, etcdAnswer] = await Promise.all(TARGETS.map((t) => curl([`${urls[t]}${path}`, ...args])));
      const names = [...CORS, 'content-type', 'x-content-type-options'];
      expect(transcript(wardAnswer!, names), `${path} ${args.join(' ')}`).toEqual(transcript(etcdAnswer!, names));
    }
  });

  it('serves the JSON gateway under /v3 and /v3beta', async () => {
    for (const prefix of ['/v3', '/v3beta']) {
      const answers = await Promise.all(
        TARGETS.map(async (t) => {
          await curl([`${urls[t]}${prefix}/kv/put`, '-X', 'POST', '-d', JSON.stringify({ key: b64(`prefix${prefix}`), value: b64('v') })]);
          return curl([`${urls[t]}${prefix}/kv/range`, '-X', 'POST', '-d', JSON.stringify({ key: b64(`prefix${prefix}`) })]);
        }),
      );
      const [wardRange, etcdRange] = answers.map((a) => ({ status: a.status, body: normaliseLine(a.body) }));
      expect(wardRange).toEqual(etcdRange);
      expect(wardRange!.status).toBe(200);
    }
  });

  it('POST /v3/watch streams the created answer and three events, one {"result"} per line, until the client closes', async () => {
    const results = await Promise.all(
      TARGETS.map(async (t) => {
        const watch = curlStream(`${urls[t]}/v3/watch`, JSON.stringify({ create_request: { key: b64('w/'), range_end: b64('w0') } }), 4);
        await watch.started;
        await postJson(t, '/v3/kv/put', { key: b64('w/1'), value: b64('one') });
        await postJson(t, '/v3/kv/put', { key: b64('w/2'), value: b64('two') });
        await postJson(t, '/v3/kv/deleterange', { key: b64('w/1') });
        return (await watch.output).map(normaliseLine);
      }),
    );
    expect(results[0]).toEqual(results[1]);
    expect(results[0]).toHaveLength(4);
    expect((results[0]![0] as { result: { created: boolean } }).result.created).toBe(true);
  });

  it('POST /v3/lease/keepalive answers a request per line with a result per line, and ends with the body', async () => {
    const results = await Promise.all(
      TARGETS.map(async (t) => {
        const { ID } = (await postJson(t, '/v3/lease/grant', { TTL: 60 })) as { ID: string };
        // One line as a number (how lease IDs are written by hand), one as a string, one unknown lease.
        const body = `{"ID":${ID}}\n{"ID":"${ID}"}\n{"ID":"12345"}\n`;
        return (await curlStream(`${urls[t]}/v3/lease/keepalive`, body, undefined).output).map(normaliseLine);
      }),
    );
    expect(results[0]).toEqual(results[1]);
    expect(results[0]).toHaveLength(3);
  });

  it('a keep-alive body that turns malformed is answered up to the bad line; one malformed from the start is an error', async () => {
    const results = await Promise.all(
      TARGETS.map(async (t) => {
        const { ID } = (await postJson(t, '/v3/lease/grant', { TTL: 60 })) as { ID: string };
        const partial = (await curlStream(`${urls[t]}/v3/lease/keepalive`, `{"ID":"${ID}"}\n{bad\n`, undefined).output).map(normaliseLine);
        const bad = await curl([`${urls[t]}/v3/lease/keepalive`, '-X', 'POST', '-d', '{bad']);
        return { partial, bad: { status: bad.status, code: (JSON.parse(bad.body) as { code: number }).code } };
      }),
    );
    expect(results[0]).toEqual(results[1]);
    expect(results[0]!.partial).toHaveLength(1);
  });
});

describe('real clients', () => {
  async function runScript(script: string, target: TargetName, prefix: string): Promise<unknown> {
    const url = new URL(urls[target]);
    const { stdout } = await run(PYTHON, [join(SCRIPTS, script), url.hostname, url.port, prefix], { timeout: 120_000, cwd: SCRIPTS, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
    return JSON.parse(stdout) as unknown;
  }

  it('python3-etcd3gw on the gRPC port\'s URL: the same script gives the same results as on etcd, watch included', async () => {
    const [wardResults, etcdResults] = await Promise.all(TARGETS.map((t) => runScript('etcd3gw_script.py', t, 'gw/')));
    expect(wardResults).toEqual(etcdResults);
    expect((wardResults as { watch_events: unknown[] }).watch_events).toHaveLength(3);
  });

  it('python3-etcd3 (gRPC) on the same URL: the same script gives the same results as on etcd', async () => {
    const [wardResults, etcdResults] = await Promise.all(TARGETS.map((t) => runScript('etcd3_script.py', t, 'grpc/')));
    expect(wardResults).toEqual(etcdResults);
    expect((wardResults as { watch_events: unknown[] }).watch_events).toHaveLength(3);
  });

  it('a client that only knows the URL MemberList gives it works over HTTP/1.1 and over gRPC', async () => {
    const listed = (await postJson('ward', '/v3/cluster/member/list', {})) as { members: Array<{ clientURLs: string[] }> };
    const clientUrls = listed.members.flatMap((m) => m.clientURLs);
    expect(clientUrls.length).toBeGreaterThan(0);
    for (const clientUrl of new Set(clientUrls)) {
      const version = await curl([`${clientUrl}/version`]);
      expect(version.status).toBe(200);
      const grpc: EtcdTestClient = etcdTestClient(new URL(clientUrl).host);
      try {
        const range = await grpc.call('KV', 'Range', { key: Buffer.from('w/2') });
        expect(range.ok).toBe(true);
      } finally {
        grpc.close();
      }
    }
  });
});

describe('with auth on', () => {
  beforeAll(async () => {
    for (const t of TARGETS) {
      await postJson(t, '/v3/auth/user/add', { name: 'root', password: 'root-pw' });
      await postJson(t, '/v3/auth/user/grant', { user: 'root', role: 'root' });
      await postJson(t, '/v3/auth/user/add', { name: 'alice', password: 'alice-pw' });
      const enabled = await postJson(t, '/v3/auth/enable', {});
      expect(enabled['error'], t).toBeUndefined();
    }
  });

  it('GET /health stays healthy, as in etcd 3.4', async () => {
    const [wardAnswer, etcdAnswer] = await Promise.all(TARGETS.map((t) => curl([`${urls[t]}/health`])));
    expect(transcript(wardAnswer!, ['content-type'])).toEqual(transcript(etcdAnswer!, ['content-type']));
    expect(wardAnswer!.status).toBe(200);
  });

  it('a keep-alive stream with auth on (root, a user, no token, a bad token) answers as etcd answers it', async () => {
    const results = await Promise.all(
      TARGETS.map(async (t) => {
        const tokens: Record<string, string | undefined> = {
          root: ((await postJson(t, '/v3/auth/authenticate', { name: 'root', password: 'root-pw' })) as { token: string }).token,
          alice: ((await postJson(t, '/v3/auth/authenticate', { name: 'alice', password: 'alice-pw' })) as { token: string }).token,
          none: undefined,
          bad: 'not-a-token.1',
        };
        const { ID } = (await postJson(t, '/v3/lease/grant', { TTL: 60 }, tokens['root'])) as { ID: string };
        const transcripts: Record<string, unknown> = {};
        for (const [who, token] of Object.entries(tokens)) {
          const answer = await curl([`${urls[t]}/v3/lease/keepalive`, '-X', 'POST', '--data-binary', `{"ID":"${ID}"}\n{"ID":"${ID}"}\n`, ...(token === undefined ? [] : ['-H', `Authorization: ${token}`])]);
          transcripts[who] = { ...transcript(answer, [...CORS, 'content-type']), body: answer.body.split('\n').filter((line) => line !== '').map(normaliseLine) };
        }
        return transcripts;
      }),
    );
    const [wardResults, etcdResults] = results as [Record<string, { status: number; body: unknown[] }>, Record<string, { status: number; body: unknown[] }>];
    // With a token (root, or a user without any permission) both renew, the same lines.
    for (const who of ['root', 'alice']) {
      expect(wardResults[who], who).toEqual(etcdResults[who]);
      expect(wardResults[who]!.body, who).toHaveLength(2);
    }
    // Where ward differs on purpose: etcd 3.4.23 checks no token on LeaseKeepAlive and renews for
    // anybody; ward refuses a stream without a valid token once auth is on (as over gRPC), with
    // the stream error object under the code's status, as grpc-gateway writes a refused stream.
    for (const who of ['none', 'bad']) {
      expect(etcdResults[who]!.status, who).toBe(200);
      expect(etcdResults[who]!.body, who).toHaveLength(2);
    }
    expect([wardResults['none']!.status, wardResults['none']!.body]).toEqual([400, [{ error: { grpc_code: 3, http_code: 400, message: 'etcdserver: user name is empty', http_status: 'Bad Request' } }]]);
    expect([wardResults['bad']!.status, wardResults['bad']!.body]).toEqual([401, [{ error: { grpc_code: 16, http_code: 401, message: 'etcdserver: invalid auth token', http_status: 'Unauthorized' } }]]);
  });

  it('a watch without permission, or without a token, is answered created-and-canceled on the stream, as etcd answers it', async () => {
    const results = await Promise.all(
      TARGETS.map(async (t) => {
        const { token } = (await postJson(t, '/v3/auth/authenticate', { name: 'alice', password: 'alice-pw' })) as { token: string };
        const denied = (await curlStream(`${urls[t]}/v3/watch`, JSON.stringify({ create_request: { key: b64('w/') } }), 1, [`Authorization: ${token}`]).output).map(normaliseLine);
        const anonymous = (await curlStream(`${urls[t]}/v3/watch`, JSON.stringify({ create_request: { key: b64('w/') } }), 1).output).map(normaliseLine);
        return { denied, anonymous };
      }),
    );
    expect(results[0]).toEqual(results[1]);
    expect(JSON.stringify(results[0]!.denied)).toContain('permission denied');
  });
});
