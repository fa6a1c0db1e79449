import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { createMetrics } from '@ward/platform/metrics';
import { createHttpServer, REQUEST_TIMEOUT_ANSWER, STREAMING_BODY, type HttpServerOptions } from './index';

function build(overrides: Partial<HttpServerOptions> = {}) {
  const lines: string[] = [];
  const destination = new Writable({ write: (chunk, _e, cb) => (lines.push(String(chunk)), cb()) });
  const metrics = createMetrics({ prefix: 'http_test_', collectProcessMetrics: false });
  metrics.counter({ name: 'things_total', help: 'things' }).inc(5);
  const app = createHttpServer({
    logger: createLogger({ name: 'http', level: 'info', destination }),
    metrics,
    bodyLimitBytes: 1024,
    requestTimeoutMs: 5000,
    keepAliveTimeoutMs: 5000,
    readiness: () => true,
    ...overrides,
  });
  return { app, lines };
}

describe('createHttpServer', () => {
  it('answers /healthz, /readyz and /metrics', async () => {
    const { app } = build();
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    const metrics = await app.inject({ url: '/metrics' });
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toContain('http_test_things_total 5');
  });

  it('reports not ready while readiness is false or throws', async () => {
    let ready = false;
    const { app } = build({ readiness: () => ready });
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(503);
    ready = true;
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
    const throwing = build({ readiness: () => Promise.reject(new Error('no leader')) }).app;
    expect((await throwing.inject({ url: '/readyz' })).statusCode).toBe(503);
  });

  it('gives the reasons of a not-ready answer in the body', async () => {
    let answer: { ready: boolean; reasons: string[] } = { ready: false, reasons: ['password tier: redis at 127.0.0.1:6379 unreachable'] };
    const { app } = build({ readiness: () => answer });
    const notReady = await app.inject({ url: '/readyz' });
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json()).toEqual({ status: 'not ready', reasons: ['password tier: redis at 127.0.0.1:6379 unreachable'] });
    answer = { ready: true, reasons: [] };
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });

  it('enforces the body limit with 413', async () => {
    const { app } = build();
    app.post('/echo', async (request) => request.body);
    const small = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
    expect(small.json()).toEqual({ a: 1 });
    const big = await app.inject({ method: 'POST', url: '/echo', payload: { a: 'x'.repeat(2000) } });
    expect(big.statusCode).toBe(413);
  });

  it('answers unmapped errors with a generic 500 and logs the details', async () => {
    const { app, lines } = build();
    app.get('/boom', async () => {
      throw new Error('database at /var/lib/secret failed');
    });
    const response = await app.inject({ url: '/boom' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ error: 'INTERNAL', message: 'internal error' });
    expect(response.body).not.toContain('/var/lib/secret');
    expect(lines.join('')).toContain('/var/lib/secret');
  });

  it('lets the app map its own errors', async () => {
    const { app } = build({ mapError: (e) => ((e as { code?: string }).code === 'ERR_X' ? { statusCode: 403, body: { error: 'denied' } } : undefined) });
    app.get('/denied', async () => {
      throw Object.assign(new Error('x'), { code: 'ERR_X' });
    });
    const response = await app.inject({ url: '/denied' });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ error: 'denied' });
  });

  it('keeps client errors as 4xx (malformed JSON)', async () => {
    const { app } = build();
    app.post('/echo', async (request) => request.body);
    const response = await app.inject({ method: 'POST', url: '/echo', payload: '{bad', headers: { 'content-type': 'application/json' } });
    expect(response.statusCode).toBe(400);
  });

  it('validates its options', () => {
    expect(() => build({ bodyLimitBytes: 0 })).toThrow(/bodyLimitBytes/);
  });
});

describe('createHttpServer deadlines', () => {
  /** Sends `head`, then `drip` every 50 ms until the server closes; everything received. */
  async function exchange(port: number, head: string, drip: string, untilMs: number): Promise<{ text: string; closed: boolean }> {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let closed = false;
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    const done = new Promise<void>((resolve) => socket.on('close', () => ((closed = true), resolve())));
    socket.write(head);
    const timer = setInterval(() => socket.writable && socket.write(drip), 50);
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, untilMs))]);
    clearInterval(timer);
    socket.destroy();
    return { text, closed };
  }

  it('cuts a body still arriving after the deadline with a 408, but not a route whose body is a stream', async () => {
    const { app } = build({ requestTimeoutMs: 200 });
    app.post('/unary', async () => ({ ok: true }));
    await app.register(async (scope) => {
      scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
      scope.post('/stream', { config: STREAMING_BODY }, (request, reply) => {
        reply.hijack();
        reply.raw.writeHead(200);
        request.raw.on('data', (chunk: Buffer) => reply.raw.write(chunk));
      });
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const port = (app.server.address() as { port: number }).port;
      const slow = await exchange(port, 'POST /unary HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{', ' ', 10_000);
      expect(slow.closed).toBe(true);
      expect(slow.text).toBe(REQUEST_TIMEOUT_ANSWER);
      // Five times the deadline, still open and still answering.
      const stream = await exchange(port, 'POST /stream HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', '1\r\nz\r\n', 1000);
      expect(stream.closed).toBe(false);
      expect(stream.text).toMatch(/^HTTP\/1\.1 200 /);
      expect(stream.text.split('z').length).toBeGreaterThan(10);
    } finally {
      await app.close();
    }
  });
});
