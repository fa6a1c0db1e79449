import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { REDACTED, createLogger, createTracer, scrub } from './index';

function capture(): { lines: () => string[]; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  return { stream, lines: () => chunks.join('').split('\n').filter((l) => l.length > 0) };
}

const PASSWORD = 'correct-horse-battery-staple';
const HASH = '$2b$10$' + 'N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJ1c2VybmFtZSI6InJvb3QiLCJyZXZpc2lvbiI6Mn0.c2lnbmF0dXJlLWJ5dGVz';
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----';
const SIMPLE_TOKEN = 'XdDcNZnYzyaKWlnG.17';

describe('createLogger redaction', () => {
  it('never writes a secret, whatever field, depth, case or position it has', async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ name: 'test', level: 'trace', destination: stream });
    const child = logger.child({ reqId: 7, token: SIMPLE_TOKEN });
    child.info({ password: PASSWORD, user: 'alice' }, 'authenticate');
    child.info({ request: { name: 'alice', Password: PASSWORD, options: { hashed_password: HASH } } }, 'user add');
    child.warn({ metadata: { Authorization: `Bearer ${JWT}`, 'x-other': 'kept' } }, 'call');
    child.error({ err: new Error(`cannot verify ${JWT}`) }, 'token rejected');
    child.info({ keys: [{ privateKey: PEM }, { note: `leaked ${PEM}` }] }, 'keys');
    child.info(`message with a hash ${HASH} and a jwt ${JWT}`);
    child.debug({ list: [{ deep: { deeper: { token: SIMPLE_TOKEN } } }] }, 'nested');
    const output = lines().join('\n');
    expect(lines()).toHaveLength(7);
    for (const secret of [PASSWORD, HASH, JWT, PEM, 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', SIMPLE_TOKEN]) {
      expect(output).not.toContain(secret);
    }
    // Non-secret data survives, so logs stay useful.
    expect(output).toContain('"user":"alice"');
    expect(output).toContain('"x-other":"kept"');
    expect(output).toContain('"reqId":7');
    expect(output).toContain(REDACTED);
    expect(output).toContain('token rejected');
  });

  it('writes JSON lines with level labels and the logger name', () => {
    const { stream, lines } = capture();
    createLogger({ name: 'raft-node', level: 'info', destination: stream, base: { nodeId: '1' } }).info({ term: 3 }, 'became leader');
    const line = JSON.parse(lines()[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', name: 'raft-node', nodeId: '1', term: 3, msg: 'became leader' });
  });

  it('respects the level', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ name: 'x', level: 'warn', destination: stream });
    logger.info('dropped');
    logger.warn('kept');
    expect(lines()).toHaveLength(1);
  });
});

describe('scrub', () => {
  it('bounds depth and breaks cycles', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(scrub(cyclic)).toEqual({ a: 1, self: '[circular]' });
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 20; i++) deep = { next: deep };
    expect(JSON.stringify(scrub(deep))).toContain('[depth limit]');
    expect(scrub(new Uint8Array(5))).toBe('[5 bytes]');
  });
});

describe('createTracer', () => {
  it('enables named tracers, all, and exclusions', () => {
    const tracer = createTracer('raft, gateway,-transport');
    expect(tracer.enabled('raft')).toBe(true);
    expect(tracer.enabled('gateway')).toBe(true);
    expect(tracer.enabled('transport')).toBe(false);
    expect(tracer.enabled('apply')).toBe(false);
    const all = createTracer('all,-wal');
    expect(all.enabled('anything')).toBe(true);
    expect(all.enabled('wal')).toBe(false);
    expect(createTracer('').enabled('raft')).toBe(false);
  });
});
