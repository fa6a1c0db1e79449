// Hostile clients, point 3 (issue 21): passwords and user names lose no byte. Requests are encoded
// by hand, so string fields carry bytes that are not UTF-8, exactly as a Go client can send them.
//
// - Passwords are bytes end to end: the exact bytes authenticate; the same bytes with invalid
//   sequences changed, or replaced by U+FFFD, do not (as on real etcd 3.4.23, run here side by
//   side), through the in-process bcrypt pool and through the BullMQ tier (real Redis, a real
//   password-verifier process).
// - A user or role name that is not UTF-8 is refused with InvalidArgument (etcd stores its bytes;
//   ward keeps names as text, see services/auth-fields.ts), so `u\xff` and `u\xfe` never become
//   one user, nor the user `u\uFFFD`.
// - A 70 KB user name is refused as too long (InvalidArgument), not as a full database. etcd 3.4.23
//   has no answer to compare with: it stops on any name over bbolt's 32 KiB key limit.
import type { ChildProcess } from 'node:child_process';
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSealingKeyEntry } from '@ward/auth/password-queue';
import { startEtcdCluster, type EtcdCluster } from '@ward/testing/etcd-harness';
import { connectTestRedis, deleteKeys, uniquePrefix } from '@ward/testing/redis';
import type { Gateway } from '../../src/index';
import { startPasswordVerifier } from '../support/password-verifier';
import { startWardCluster, type WardCluster } from '../support/ward-cluster';

const ROOT_PASSWORD = Buffer.from('root-password-21');
/** The password: valid and invalid UTF-8 mixed. */
const PASSWORD = Buffer.from([0x41, 0xff, 0xfe, 0x80, 0xc3, 0x42, 0x9f, 0xa0]);
/** The same length, each invalid sequence changed to another invalid one. */
const PASSWORD_OTHER_BYTES = Buffer.from([0x41, 0x80, 0x80, 0x80, 0xc3, 0x42, 0xbf, 0xbf]);
/** What the password becomes when decoded as text: "A\uFFFD\uFFFD\uFFFD\uFFFDB\uFFFD\uFFFD". */
const PASSWORD_AS_TEXT = Buffer.from(new TextDecoder().decode(PASSWORD), 'utf8');

let ward: WardCluster;
let etcd: EtcdCluster;

beforeAll(async () => {
  [ward, etcd] = await Promise.all([startWardCluster(), startEtcdCluster({ bcryptCost: 4 })]);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled([ward?.stop(), etcd?.stop()]);
});

// ---- hand-encoded requests ------------------------------------------------------------------

function varint(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** A message of length-delimited fields: `[fieldNumber, bytes]`, in order. */
function message(...fields: Array<readonly [number, Uint8Array]>): Buffer {
  return Buffer.concat(fields.map(([number, bytes]) => Buffer.concat([Buffer.from([...varint((number << 3) | 2), ...varint(bytes.length)]), bytes])));
}

/** The length-delimited fields of an answer, by number (repeated fields keep every value). */
function fieldsOf(bytes: Buffer): Map<number, Buffer[]> {
  const out = new Map<number, Buffer[]>();
  let at = 0;
  const readVarint = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = bytes[at++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  };
  while (at < bytes.length) {
    const tag = readVarint();
    if ((tag & 7) === 0) {
      readVarint();
      continue;
    }
    const length = readVarint();
    out.set(tag >> 3, [...(out.get(tag >> 3) ?? []), bytes.subarray(at, at + length)]);
    at += length;
  }
  return out;
}

type Outcome = { ok: true; fields: Map<number, Buffer[]> } | { ok: false; code: number; details: string };

/** Sends `body` to `/etcdserverpb.Auth/<method>` at `address` as it is. */
function authCall(address: string, method: string, body: Buffer, token?: string): Promise<Outcome> {
  const client = new Client(address, credentials.createInsecure(), { 'grpc.max_send_message_length': 8 * 1024 * 1024 });
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('token', token);
  const identity = (value: Buffer): Buffer => value;
  return new Promise((resolve) => {
    client.makeUnaryRequest(`/etcdserverpb.Auth/${method}`, identity, identity, body, metadata, { deadline: Date.now() + 20_000 }, (error: ServiceError | null, answer?: Buffer) => {
      client.close();
      resolve(error ? { ok: false, code: error.code, details: error.details } : { ok: true, fields: fieldsOf(answer ?? Buffer.alloc(0)) });
    });
  });
}

const text = (value: string): Buffer => Buffer.from(value, 'utf8');

/** Authenticate's token, or the refusal. */
async function authenticate(address: string, name: Buffer, password: Buffer): Promise<{ token: string } | { code: number; details: string }> {
  const outcome = await authCall(address, 'Authenticate', message([1, name], [2, password]));
  if (!outcome.ok) return { code: outcome.code, details: outcome.details };
  return { token: outcome.fields.get(2)![0]!.toString() };
}

async function must(address: string, method: string, body: Buffer, token?: string): Promise<Map<number, Buffer[]>> {
  const outcome = await authCall(address, method, body, token);
  if (!outcome.ok) throw new Error(`${method} failed: ${outcome.code} ${outcome.details}`);
  return outcome.fields;
}

/** root with the root role, auth on; root's token. */
async function enableAuth(address: string): Promise<string> {
  await must(address, 'UserAdd', message([1, text('root')], [2, ROOT_PASSWORD]));
  await must(address, 'UserGrantRole', message([1, text('root')], [2, text('root')]));
  await must(address, 'AuthEnable', Buffer.alloc(0));
  const root = await authenticate(address, text('root'), ROOT_PASSWORD);
  if (!('token' in root)) throw new Error(`root login failed: ${root.details}`);
  return root.token;
}

const AUTH_FAILED = { code: 3, details: 'etcdserver: authentication failed, invalid user ID or password' };

// ---- the tests ------------------------------------------------------------------------------

describe('hostile: credentials are byte strings', () => {
  let wardRoot: string;
  let etcdRoot: string;
  let wardAddress: string;

  beforeAll(async () => {
    wardAddress = ward.gateways[0]!.grpcAddress;
    [wardRoot, etcdRoot] = await Promise.all([enableAuth(wardAddress), enableAuth(etcd.clientEndpoint)]);
  }, 60_000);

  it('a password of raw bytes authenticates with exactly those bytes, as on etcd 3.4.23', async () => {
    const answers: Record<string, unknown[]> = {};
    for (const [target, address, root] of [['ward', wardAddress, wardRoot], ['etcd', etcd.clientEndpoint, etcdRoot]] as const) {
      await must(address, 'UserAdd', message([1, text('bytes-user')], [2, PASSWORD]), root);
      answers[target] = [
        'token' in (await authenticate(address, text('bytes-user'), PASSWORD)),
        await authenticate(address, text('bytes-user'), PASSWORD_OTHER_BYTES),
        await authenticate(address, text('bytes-user'), PASSWORD_AS_TEXT),
      ];
    }
    expect(answers['ward']).toEqual([true, AUTH_FAILED, AUTH_FAILED]);
    expect(answers['ward']).toEqual(answers['etcd']);
  });

  it('a changed password is its new bytes: the old bytes and the U+FFFD text of the new ones fail', async () => {
    const next = Buffer.from([0xfe, 0x00, 0xff, 0x41]);
    await must(wardAddress, 'UserChangePassword', message([1, text('bytes-user')], [2, next]), wardRoot);
    expect('token' in (await authenticate(wardAddress, text('bytes-user'), next))).toBe(true);
    expect(await authenticate(wardAddress, text('bytes-user'), PASSWORD)).toEqual(AUTH_FAILED);
    expect(await authenticate(wardAddress, text('bytes-user'), Buffer.from([0xfe, 0x00, 0xfe, 0x41]))).toEqual(AUTH_FAILED);
    expect(await authenticate(wardAddress, text('bytes-user'), Buffer.from('\ufffd\u0000\ufffdA'))).toEqual(AUTH_FAILED);
  });

  it('72 bytes of invalid UTF-8 are 72 bytes (bcrypt takes them); 73 bytes are too long, as etcd ≥ 3.5 says', async () => {
    const seventyTwo = Buffer.alloc(72, 0x80);
    await must(wardAddress, 'UserAdd', message([1, text('long-bytes')], [2, seventyTwo]), wardRoot);
    expect('token' in (await authenticate(wardAddress, text('long-bytes'), seventyTwo))).toBe(true);
    expect(await authenticate(wardAddress, text('long-bytes'), Buffer.alloc(72, 0x81))).toEqual(AUTH_FAILED);
    const tooLong = await authCall(wardAddress, 'UserAdd', message([1, text('too-long-bytes')], [2, Buffer.alloc(73, 0x80)]), wardRoot);
    expect(tooLong).toEqual({ ok: false, code: 2, details: 'bcrypt: password length exceeds 72 bytes' });
  });

  it('user names `u\\xff` and `u\\xfe` are refused (not UTF-8), never stored as one user', async () => {
    const notUtf8 = { ok: false, code: 3, details: 'etcdserver: user name is not valid UTF-8' };
    expect(await authCall(wardAddress, 'UserAdd', message([1, Buffer.from([0x75, 0xff])], [2, PASSWORD]), wardRoot)).toEqual(notUtf8);
    expect(await authCall(wardAddress, 'UserAdd', message([1, Buffer.from([0x75, 0xfe])], [2, PASSWORD]), wardRoot)).toEqual(notUtf8);
    // The valid name the invalid bytes would have been folded into is a user of its own.
    await must(wardAddress, 'UserAdd', message([1, text('u\ufffd')], [2, PASSWORD]), wardRoot);
    expect(await authCall(wardAddress, 'UserAdd', message([1, Buffer.from([0x75, 0xfe])], [2, PASSWORD]), wardRoot)).toEqual(notUtf8);
    // Nobody logs in as `u\uFFFD` by sending `u\xff`: no such user can exist, etcd's answer for one.
    expect(await authenticate(wardAddress, Buffer.from([0x75, 0xff]), PASSWORD)).toEqual(AUTH_FAILED);
    expect('token' in (await authenticate(wardAddress, text('u\ufffd'), PASSWORD))).toBe(true);
    for (const [method, body] of [
      ['UserGet', message([1, Buffer.from([0x75, 0xff])])],
      ['UserDelete', message([1, Buffer.from([0x75, 0xfe])])],
      ['UserChangePassword', message([1, Buffer.from([0x75, 0xff])], [2, PASSWORD])],
      ['UserGrantRole', message([1, Buffer.from([0x75, 0xff])], [2, text('root')])],
    ] as const) {
      expect([method, await authCall(wardAddress, method, body, wardRoot)]).toEqual([method, notUtf8]);
    }
    const users = (await must(wardAddress, 'UserList', Buffer.alloc(0), wardRoot)).get(2) ?? [];
    expect(users.map((name) => name.toString('hex')).sort()).toEqual(['6c6f6e672d6279746573', '726f6f74', '62797465732d75736572', '75efbfbd'].sort());
  });

  it('role names that are not UTF-8 are refused the same way', async () => {
    const notUtf8 = { ok: false, code: 3, details: 'etcdserver: role name is not valid UTF-8' };
    expect(await authCall(wardAddress, 'RoleAdd', message([1, Buffer.from([0x72, 0xff])]), wardRoot)).toEqual(notUtf8);
    expect(await authCall(wardAddress, 'UserGrantRole', message([1, text('bytes-user')], [2, Buffer.from([0x72, 0xfe])]), wardRoot)).toEqual(notUtf8);
    expect(await authCall(wardAddress, 'RoleGet', message([1, Buffer.from([0x72, 0xff])]), wardRoot)).toEqual(notUtf8);
    expect((await must(wardAddress, 'RoleList', Buffer.alloc(0), wardRoot)).get(2) ?? []).toEqual([]);
  });

  it('a 70 KB user name is too long (InvalidArgument), not `database space exceeded`; 64 KiB is a user', async () => {
    const seventyKb = Buffer.alloc(70 * 1024, 0x6e);
    expect(await authCall(wardAddress, 'UserAdd', message([1, seventyKb], [2, text('pw')]), wardRoot)).toEqual({ ok: false, code: 3, details: 'etcdserver: user name is too long' });
    expect(await authCall(wardAddress, 'RoleAdd', message([1, seventyKb]), wardRoot)).toEqual({ ok: false, code: 3, details: 'etcdserver: role name is too long' });
    // Looking it up is etcd's answer for a name that does not exist.
    expect(await authCall(wardAddress, 'UserGet', message([1, seventyKb]), wardRoot)).toEqual({ ok: false, code: 9, details: 'etcdserver: user name not found' });
    const sixtyFourKib = Buffer.alloc(64 * 1024, 0x6e);
    await must(wardAddress, 'UserAdd', message([1, sixtyFourKib], [2, text('pw')]), wardRoot);
    expect('token' in (await authenticate(wardAddress, sixtyFourKib, text('pw')))).toBe(true);
    await must(wardAddress, 'UserDelete', message([1, sixtyFourKib]), wardRoot);
  });
});

describe('hostile: credential bytes through the BullMQ password tier', () => {
  const redis = connectTestRedis('hostile-credential-bytes');
  const prefix = uniquePrefix('hostile-creds');
  const keyRing = generateSealingKeyEntry('k1');
  let worker: ChildProcess | undefined;
  let queued: Gateway;

  beforeAll(async () => {
    worker = await startPasswordVerifier(keyRing, prefix);
    queued = await ward.addGateway({ redisUrl: 'redis://127.0.0.1:6379/0', passwordPayloadKeys: keyRing, passwordQueuePrefix: prefix });
  }, 120_000);

  afterAll(async () => {
    worker?.kill('SIGKILL');
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
  });

  it('hashes and verifies the exact bytes on the worker', async () => {
    expect(queued.passwordTier).toBe('queue');
    const root = await authenticate(queued.grpcAddress, text('root'), ROOT_PASSWORD);
    if (!('token' in root)) throw new Error(root.details);
    const password = Buffer.from([0x51, 0xff, 0x80, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x00, 0x71]);
    await must(queued.grpcAddress, 'UserAdd', message([1, text('queued-bytes')], [2, password]), root.token);
    expect('token' in (await authenticate(queued.grpcAddress, text('queued-bytes'), password))).toBe(true);
    expect(await authenticate(queued.grpcAddress, text('queued-bytes'), Buffer.from([0x51, 0xfe, 0x80, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x00, 0x71]))).toEqual(AUTH_FAILED);
    expect(await authenticate(queued.grpcAddress, text('queued-bytes'), Buffer.from(new TextDecoder().decode(password), 'utf8'))).toEqual(AUTH_FAILED);
    // The in-process gateway verifies the worker's hash of the same bytes.
    expect('token' in (await authenticate(ward.gateways[0]!.grpcAddress, text('queued-bytes'), password))).toBe(true);
  });
});

