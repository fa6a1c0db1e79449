// Applied Puts per second through the applier chain: auth off, auth on as root, auth on as a user
// holding 1 or 10,000 key-range permissions; each directly and through the entry codec (encode +
// decode, as a Raft entry would travel). 10,000 distinct keys are overwritten in turn. A
// measurement, not a test: figures vary with the machine and its load.
import { prefixRangeEnd, utf8 } from '@ward/shared/bytes';
import { Applier } from '../src/applier';
import { decodeApplyRequest, encodeApplyRequest } from '../src/codec/entry-codec';
import { toPasswordHash } from '../src/password-hash';
import type { ApplyOperation, ApplyRequest } from '../src/request';

const KEYS = 10_000;
const ROUNDS = 5;
const ROUND_MS = 400;
const HASH = toPasswordHash(utf8(`$2b$04$${'a'.repeat(53)}`));
const pad = (i: number): string => i.toString().padStart(8, '0');

interface Case {
  readonly name: string;
  readonly applier: Applier;
  readonly user: string;
  readonly viaCodec: boolean;
  readonly rates: number[];
}

function setUp(auth: boolean, permissionCount: number): Applier {
  const applier = Applier.create();
  const ops: ApplyOperation[] = [];
  if (auth) {
    ops.push({ type: 'userAdd', request: { name: 'root', passwordHash: HASH, noPassword: false } });
    ops.push({ type: 'userGrantRole', request: { user: 'root', role: 'root' } });
    ops.push({ type: 'userAdd', request: { name: 'writer', passwordHash: HASH, noPassword: false } });
    ops.push({ type: 'roleAdd', request: { name: 'writers' } });
    ops.push({ type: 'userGrantRole', request: { user: 'writer', role: 'writers' } });
    for (let i = 0; i < permissionCount; i++) {
      // One grant covers the benchmark's keys; the others are unrelated prefixes around them.
      const key = i === 0 ? utf8('/bench/') : utf8(`/other/${pad(i)}/`);
      ops.push({ type: 'roleGrantPermission', request: { name: 'writers', perm: { permType: 2, key, rangeEnd: prefixRangeEnd(key) } } });
    }
    ops.push({ type: 'authEnable' });
  }
  for (const operation of ops) {
    const result = applier.apply(applier.appliedIndex + 1, { header: { id: 0n, username: '', authRevision: 0 }, operation });
    if (!result.ok) throw new Error(`setup failed: ${result.error.message}`);
  }
  return applier;
}

function runPuts(c: Case): number {
  const revision = c.applier.authView.revision;
  const start = performance.now();
  let puts = 0;
  let elapsed = 0;
  while (elapsed < ROUND_MS) {
    for (let i = 0; i < 1000; i++) {
      let request: ApplyRequest = {
        header: { id: BigInt(puts), username: c.user, authRevision: c.user === '' ? 0 : revision },
        operation: { type: 'put', request: { key: utf8(`/bench/${pad(puts % KEYS)}`), value: utf8('value-of-some-thirty-two-bytes!!') } },
      };
      if (c.viaCodec) request = decodeApplyRequest(encodeApplyRequest(request));
      const result = c.applier.apply(c.applier.appliedIndex + 1, request);
      if (!result.ok) throw new Error(`put refused: ${result.error.message}`);
      puts++;
    }
    elapsed = performance.now() - start;
  }
  return (puts / elapsed) * 1000;
}

const cases: Case[] = [];
for (const viaCodec of [false, true]) {
  const suffix = viaCodec ? ' + codec' : '';
  cases.push({ name: `auth off${suffix}`, applier: setUp(false, 0), user: '', viaCodec, rates: [] });
  cases.push({ name: `auth on, root${suffix}`, applier: setUp(true, 1), user: 'root', viaCodec, rates: [] });
  cases.push({ name: `auth on, user with 1 permission${suffix}`, applier: setUp(true, 1), user: 'writer', viaCodec, rates: [] });
  cases.push({ name: `auth on, user with 10,000 permissions${suffix}`, applier: setUp(true, 10_000), user: 'writer', viaCodec, rates: [] });
}
for (const c of cases) runPuts(c); // warm up
for (let round = 0; round < ROUNDS; round++) for (const c of cases) c.rates.push(runPuts(c));

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log('| case | applied Puts/s (median) |');
console.log('|---|---:|');
for (const c of cases) console.log(`| ${c.name} | ${Math.round(median(c.rates)).toLocaleString('en-US')} |`);
console.log(`\nMedian of ${ROUNDS} interleaved ${ROUND_MS} ms rounds over ${KEYS.toLocaleString('en-US')} keys overwritten in turn.`);
