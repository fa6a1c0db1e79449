// JWT sign and verify per second for every sign method (one thread; jose on WebCrypto).
//   npx nx run auth-tokens:bench
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { ManualClock } from '@ward/shared/clock';
import { JWT_SIGN_METHODS, JwtTokenProvider, type JwtKeyConfig, type JwtSignMethod } from '../src/index';

function keyFor(method: JwtSignMethod): JwtKeyConfig {
  const pem = (key: { export(o: { type: 'pkcs8'; format: 'pem' }): string | Buffer }): string => key.export({ type: 'pkcs8', format: 'pem' }).toString();
  if (method.startsWith('HS')) return { signMethod: method, secret: randomBytes(64) };
  if (method.startsWith('RS') || method.startsWith('PS')) return { signMethod: method, privateKeyPem: pem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey) };
  if (method === 'EdDSA') return { signMethod: method, privateKeyPem: pem(generateKeyPairSync('ed25519').privateKey) };
  const curve = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }[method as 'ES256'];
  return { signMethod: method, privateKeyPem: pem(generateKeyPairSync('ec', { namedCurve: curve }).privateKey) };
}

/** Operations per second: the best of `rounds` rounds (the machine is shared; the best round is the least disturbed). */
async function rate(durationMs: number, op: () => Promise<unknown>, rounds = 3): Promise<number> {
  let best = 0;
  for (let round = 0; round < rounds; round++) {
    let count = 0;
    const startedAt = performance.now();
    while (performance.now() - startedAt < durationMs) {
      await op();
      count += 1;
    }
    best = Math.max(best, count / ((performance.now() - startedAt) / 1000));
  }
  return best;
}

const clock = new ManualClock(Date.now());
console.log('JWT per second (best of 3 rounds), one event loop, RSA 2048 (shared 2-CPU machine: indicative)\n');
console.log('| method | sign/s | verify/s | token chars |');
console.log('|---|---:|---:|---:|');
for (const method of JWT_SIGN_METHODS) {
  const provider = await JwtTokenProvider.create({
    primary: keyFor(method),
    policy: { ttlMs: 300_000, clockToleranceSeconds: 30, maxTokenLengthChars: 8192, requireExpiry: true, maxLifetimeSeconds: 86_400, includeKeyIdHeader: true, clock },
  });
  const token = await provider.sign({ username: 'bench', revision: 1 });
  const signs = await rate(400, () => provider.sign({ username: 'bench', revision: 1 }));
  const verifies = await rate(400, () => provider.verify(token));
  console.log(`| ${method} | ${signs.toFixed(0)} | ${verifies.toFixed(0)} | ${token.length} |`);
}
