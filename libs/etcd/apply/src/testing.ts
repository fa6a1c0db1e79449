// Test helpers (not exported from index.ts): a harness that applies operations at increasing log
// indexes, as a named user carrying the current auth revision unless told otherwise.
import { utf8 } from '@ward/shared/bytes';
import type { WireErrorName } from '@ward/etcd/wire-errors';
import { Applier, type ApplierOptions } from './applier';
import { decodeApplyRequest, encodeApplyRequest } from './codec/entry-codec';
import { toPasswordHash, type PasswordHash } from './password-hash';
import type { ApplyOperation, ApplyRequest } from './request';
import type { ApplyResult } from './response';

export const b = (text: string): Uint8Array => utf8(text);
export const NONE = new Uint8Array(0);
export const FROM_KEY = Uint8Array.of(0);

const BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A well-formed bcrypt hash string for `seed` (not a real hash: for tests that never log in). */
export function fakeHash(seed: number): PasswordHash {
  let body = '';
  let state = seed >>> 0 || 1;
  for (let i = 0; i < 53; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    body += BCRYPT_ALPHABET[(state >>> 16) % BCRYPT_ALPHABET.length];
  }
  return toPasswordHash(utf8(`$2b$04$${body}`));
}

/** What a result was, in one comparable word: 'ok' or the wire error's catalogue name. */
export function outcome(result: ApplyResult): 'ok' | WireErrorName {
  return result.ok ? 'ok' : result.error.wireName;
}

export class Harness {
  readonly applier: Applier;
  private nextIndex = 1;
  private nextId = 1n;
  /** When true, every request makes a round trip through the entry codec first. */
  viaCodec = true;

  constructor(options: ApplierOptions = {}, applier?: Applier) {
    this.applier = applier ?? Applier.create(options);
    this.nextIndex = this.applier.appliedIndex + 1;
  }

  get revision(): number {
    return this.applier.authView.revision;
  }

  /** Applies `operation` as `username` with `authRevision` (default: the store's current one). */
  run(username: string, operation: ApplyOperation, authRevision: number = username === '' ? 0 : this.revision): ApplyResult {
    let request: ApplyRequest = { header: { id: this.nextId++, username, authRevision }, operation };
    if (this.viaCodec) request = decodeApplyRequest(encodeApplyRequest(request));
    return this.applier.apply(this.nextIndex++, request);
  }

  /** Like run, but fails the test unless the operation succeeded. */
  must(username: string, operation: ApplyOperation): ApplyResult {
    const result = this.run(username, operation);
    if (!result.ok) throw new Error(`${operation.type} as ${username || '(anonymous)'} failed: ${result.error.message}`);
    return result;
  }
}

/**
 * spec §7's standard setup: root (root role, no role object), test-user with test-role =
 * READWRITE on the single key `foo`, auth enabled.
 */
export function standardSetup(options: ApplierOptions = {}): Harness {
  const h = new Harness(options);
  h.must('', { type: 'userAdd', request: { name: 'root', passwordHash: fakeHash(1), noPassword: false } });
  h.must('', { type: 'userGrantRole', request: { user: 'root', role: 'root' } });
  h.must('', { type: 'roleAdd', request: { name: 'test-role' } });
  h.must('', { type: 'roleGrantPermission', request: { name: 'test-role', perm: { permType: 2, key: b('foo'), rangeEnd: NONE } } });
  h.must('', { type: 'userAdd', request: { name: 'test-user', passwordHash: fakeHash(2), noPassword: false } });
  h.must('', { type: 'userGrantRole', request: { user: 'test-user', role: 'test-role' } });
  h.must('', { type: 'authEnable' });
  return h;
}

export const put = (key: string, value = 'v', extra: Record<string, unknown> = {}): ApplyOperation => ({
  type: 'put',
  request: { key: b(key), value: b(value), ...extra },
});

export const range = (key: string, rangeEnd?: Uint8Array): ApplyOperation => ({
  type: 'range',
  request: rangeEnd === undefined ? { key: b(key) } : { key: b(key), rangeEnd },
});
