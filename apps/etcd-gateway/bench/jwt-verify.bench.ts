// Token-service JWT verifications per CPU second in the gateway: with the key cache (the
// directory's keys imported once, as DirectoryJwtVerifier keeps them) and without it (every token
// imports its key from the published JWK first, as a verifier without a cache would). EdDSA and
// ES256. In process, one core; figures are indicative on a shared machine.
//   npx nx run etcd-gateway:bench
import { cpuUsage } from 'node:process';
import { generateJwtKeyPem, loadJwtKey, loadPublicJwk, signIssuedToken, verifyJwt, type JwtPolicy } from '@ward/auth/tokens';
import { createLogger } from '@ward/platform/logging';
import { systemClock } from '@ward/shared/clock';
import { DirectoryJwtVerifier } from '../src/identity/directory-jwt-verifier';

const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 3000);

async function measure(run: () => Promise<void>): Promise<{ perCpuSecond: number; perSecond: number }> {
  for (let i = 0; i < 200; i++) await run(); // warm-up
  const cpu0 = cpuUsage();
  const t0 = performance.now();
  let count = 0;
  while (performance.now() - t0 < DURATION_MS) {
    await run();
    count += 1;
  }
  const cpu = cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return { perCpuSecond: count / cpuSeconds, perSecond: count / ((performance.now() - t0) / 1000) };
}

const rows: string[] = [];
for (const alg of ['EdDSA', 'ES256'] as const) {
  const key = await loadJwtKey({ signMethod: alg, privateKeyPem: generateJwtKeyPem(alg).privateKeyPem, keyId: 'bench-1' });
  const nowSeconds = Math.floor(Date.now() / 1000);
  const record = { keyId: 'bench-1', alg, publicJwk: JSON.stringify(key.publicJwk), notBeforeSeconds: nowSeconds - 60, retireAfterSeconds: nowSeconds + 3600 };
  const token = await signIssuedToken(key, { username: 'bench', revision: 5, issuer: 'ward-token-service', audience: 'ward', issuedAtSeconds: nowSeconds, expiresAtSeconds: nowSeconds + 600, jwtId: 'b' });
  const cached = new DirectoryJwtVerifier({
    readDirectory: async () => ({ keys: [record], authRevision: 5 }),
    clock: systemClock,
    logger: createLogger({ name: 'bench', level: 'silent' }),
    issuer: 'ward-token-service',
    audience: 'ward',
    clockToleranceSeconds: 30,
    maxLifetimeSeconds: 86_400,
    minRefreshIntervalMs: 1000,
    maxAgeMs: 3_600_000,
  });
  const policy: JwtPolicy = { ttlMs: 1000, clockToleranceSeconds: 30, maxTokenLengthChars: 8192, requireExpiry: true, maxLifetimeSeconds: 86_400, includeKeyIdHeader: true, clock: systemClock };
  const withCache = await measure(async () => {
    if ((await cached.verify(token)) === undefined) throw new Error('refused');
  });
  const withoutCache = await measure(async () => {
    const imported = await loadPublicJwk({ signMethod: alg, jwk: JSON.parse(record.publicJwk), keyId: record.keyId, expectedIssuer: 'ward-token-service', expectedAudience: 'ward' });
    await verifyJwt(token, [imported], policy);
  });
  rows.push(`| ${alg} | with the key cache | ${withCache.perCpuSecond.toFixed(0)} | ${withCache.perSecond.toFixed(0)} |`);
  rows.push(`| ${alg} | without (key imported per token) | ${withoutCache.perCpuSecond.toFixed(0)} | ${withoutCache.perSecond.toFixed(0)} |`);
}
console.log(`token-service JWT verification in the gateway, ${DURATION_MS} ms per row, one caller\n`);
console.log('| alg | keys | verifications per CPU second | verifications/s |');
console.log('|---|---|---:|---:|');
for (const line of rows) console.log(line);
