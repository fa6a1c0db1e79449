import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from './free-port';
import { MemberProcess } from './member-process';

// Stand-ins for a member's entry point: plain node scripts that log a line to stdout and then
// answer /healthz, hold the port without answering, or never listen.
const SCRIPTS = {
  answers: `
    process.stdout.write('{"msg":"member started"}\\n');
    require('node:http').createServer((req, res) => res.end('{"status":"ok"}')).listen(Number(process.env.PORT), '127.0.0.1');`,
  silent: `
    process.stdout.write('{"msg":"log opened"}\\n');
    require('node:net').createServer(() => undefined).listen(Number(process.env.PORT), '127.0.0.1');`,
  absent: `
    process.stdout.write('{"msg":"opening the log"}\\n');
    setInterval(() => undefined, 1000);`,
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'member-process-'));
  for (const [name, text] of Object.entries(SCRIPTS)) await writeFile(join(dir, `${name}.cjs`), text);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function start(script: keyof typeof SCRIPTS): Promise<MemberProcess> {
  const [port] = await freePorts(1);
  return MemberProcess.start({
    entry: join(dir, `${script}.cjs`),
    name: script,
    env: { PORT: String(port) },
    logFile: join(dir, `${script}.log`),
    httpPort: port!,
    startTimeoutMs: 2500,
  });
}

describe('MemberProcess.start', () => {
  it('returns once /healthz answers', async () => {
    const member = await start('answers');
    expect(member.running).toBe(true);
    await member.kill();
  });

  it('a member listening but never answering is killed, and the error says so and quotes its log', async () => {
    const failure = await start('silent').then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/^silent did not answer \/healthz on port \d+ within 2500 ms \(last attempt: TimeoutError/);
    expect(failure).toContain('{"msg":"log opened"}');
  });

  it('a member that never listens: the error names the refused connection and quotes its log', async () => {
    const failure = await start('absent').then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/last attempt: TypeError: fetch failed \(ECONNREFUSED\)/);
    expect(failure).toContain('{"msg":"opening the log"}');
  });
});
