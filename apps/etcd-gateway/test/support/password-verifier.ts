// Integration-test fixture: one real password-verifier process (the BullMQ tier's worker, from
// its sources) on the test Redis, with a given payload key ring and queue prefix; resolves once it
// says it started.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { WORKSPACE_ROOT } from '@ward/testing/cluster';

const START_TIMEOUT_MS = 60_000;

export function startPasswordVerifier(keyRing: string, prefix: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(WORKSPACE_ROOT, 'apps/password-verifier/src/main.ts')], {
    cwd: WORKSPACE_ROOT,
    env: { PATH: process.env['PATH'] ?? '', VERIFIER_PAYLOAD_KEYS: keyRing, VERIFIER_QUEUE_PREFIX: prefix, VERIFIER_HTTP_PORT: '0', VERIFIER_BCRYPT_COST: '4', VERIFIER_DRAIN_DELAY_SECONDS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`password-verifier did not start:\n${output}`)), START_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('password verifier started')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  });
}
