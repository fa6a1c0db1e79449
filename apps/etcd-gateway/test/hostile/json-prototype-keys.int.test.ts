// Hostile clients, JSON keys named like JavaScript properties (issue 21, point 4): bodies with
// `constructor`, `toString`, `hasOwnProperty`, `__proto__`, … as keys, duplicate keys, wrong types
// and arrays where objects belong, posted over real HTTP to the gateway in front of three
// raft-nodes and to etcd 3.4.23's own JSON gateway. The gateway answers each as etcd does (unknown
// fields ignored, wrong types refused with code 3 and Go's text), never `internal error`, and a
// flood of such requests without a token writes no error-level line per request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEtcdCluster, type EtcdCluster } from '@ward/testing/etcd-harness';
import { startWardCluster, type WardCluster } from '../support/ward-cluster';

const b64 = (text: string): string => Buffer.from(text).toString('base64');
const KEY = b64('app/');
const OTHER = b64('other');

let ward: WardCluster;
let etcd: EtcdCluster;

interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown>;
}

async function post(base: string, path: string, body: string): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const wardUrl = (): string => `http://${ward.gateways[0]!.httpAddress}`;

/** What is comparable between the two: errors whole, answers without their headers and revisions. */
function comparable(answer: Answer): unknown {
  if (answer.status !== 200) return answer;
  const { header: _header, ...rest } = answer.json;
  const kvs = (rest['kvs'] as Array<Record<string, unknown>> | undefined)?.map(({ key, value }) => ({ key, value }));
  return { status: 200, ...rest, ...(kvs === undefined ? {} : { kvs }) };
}

const errorLines = (): string[] =>
  ward.logLines.flatMap((chunk) => chunk.split('\n')).filter((line) => line.trim() !== '' && (JSON.parse(line) as { level: number }).level >= 50);

beforeAll(async () => {
  [ward, etcd] = await Promise.all([startWardCluster(), startEtcdCluster({ members: 1 })]);
  for (const base of [wardUrl(), etcd.jsonGatewayUrl]) {
    expect((await post(base, '/v3/kv/put', JSON.stringify({ key: KEY, value: b64('v1') }))).status).toBe(200);
  }
}, 180_000);

afterAll(async () => {
  await Promise.allSettled([ward?.stop(), etcd?.stop()]);
});

const PROTOTYPE_NAMES = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__', '__proto__', 'prototype'];

const BODIES: ReadonlyArray<readonly [string, string, string]> = [
  ...PROTOTYPE_NAMES.map((name) => [`"${name}": 1`, '/v3/kv/range', `{"${name}":1,"key":"${KEY}"}`] as const),
  ...PROTOTYPE_NAMES.map((name) => [`"${name}" alone`, '/v3/kv/range', `{"${name}":{"key":"${OTHER}"}}`] as const),
  ['__proto__ holding another key, before the key', '/v3/kv/range', `{"__proto__":{"key":"${OTHER}"},"key":"${KEY}"}`],
  ['__proto__ null and array', '/v3/kv/range', `{"__proto__":null,"constructor":[],"key":"${KEY}"}`],
  ['a duplicate key (the last wins)', '/v3/kv/range', `{"key":"${OTHER}","key":"${KEY}"}`],
  ['prototype names nested in a txn', '/v3/kv/txn', `{"compare":[{"key":"${KEY}","__proto__":{"x":1},"constructor":2,"result":"EQUAL","target":"VALUE","value":"${b64('v1')}"}],"success":[{"request_range":{"key":"${KEY}","toString":"x"},"hasOwnProperty":[]}]}`],
  ['a number for bytes', '/v3/kv/range', '{"key":1}'],
  ['a bool for an int64', '/v3/kv/range', `{"key":"${KEY}","limit":true}`],
  ['a string for a bool', '/v3/kv/range', `{"key":"${KEY}","serializable":"yes"}`],
  ['a bool for an enum', '/v3/kv/range', `{"key":"${KEY}","sort_order":true}`],
  ['an array body', '/v3/kv/range', '[1,2]'],
  ['an array where a txn op belongs', '/v3/kv/txn', '{"success":[[]]}'],
  ['an object where a list belongs', '/v3/kv/txn', `{"success":{"request_range":{"key":"${KEY}"}}}`],
  ['an array for a oneof message', '/v3/kv/txn', '{"success":[{"request_range":[1]}]}'],
  ['an array for a permission', '/v3/auth/role/grant', '{"name":"r","perm":[]}'],
  ['a number for a user name', '/v3/auth/user/add', '{"name":1,"password":"p"}'],
];

describe('hostile: JSON keys named like JavaScript properties', () => {
  it.each(BODIES)('%s: answered as etcd 3.4.23 answers it', async (_case, path, body) => {
    const [mine, theirs] = await Promise.all([post(wardUrl(), path, body), post(etcd.jsonGatewayUrl, path, body)]);
    expect(mine.json['code']).not.toBe(13);
    expect(comparable(mine)).toEqual(comparable(theirs));
  });

  it('a flood of prototype-key requests without a token: every one answered, no error line per request', async () => {
    const before = errorLines().length;
    const answers: Answer[] = [];
    for (let round = 0; round < 25; round++) {
      answers.push(...(await Promise.all(PROTOTYPE_NAMES.map((name) => post(wardUrl(), '/v3/kv/range', `{"${name}":1,"key":"${KEY}"}`)))));
    }
    expect(answers).toHaveLength(200);
    for (const answer of answers) expect(answer).toMatchObject({ status: 200, json: { kvs: [{ key: KEY, value: b64('v1') }], count: '1' } });
    expect(errorLines().length - before).toBeLessThanOrEqual(5);
  });
});
