import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { createMetrics } from '@ward/platform/metrics';
import { createHttpServer, type HttpServerOptions } from './index';

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
