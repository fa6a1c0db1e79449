import { fastify, type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { clusterVersionOf, CORS_HEADERS, registerClientRoutes, type ClientRoutesOptions } from './client-routes';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function build(overrides: Partial<ClientRoutesOptions> = {}): Promise<FastifyInstance> {
  app = fastify();
  registerClientRoutes(app, { serverVersion: async () => '3.5.0', healthy: async () => true, apiPrefixes: ['/v3', '/v3beta'], clientCertAuth: false, ...overrides });
  app.post('/v3/kv/range', async () => ({}));
  await app.ready();
  return app;
}

describe('clusterVersionOf', () => {
  it('is the major.minor with patch 0', () => {
    expect(clusterVersionOf('3.4.23')).toBe('3.4.0');
    expect(clusterVersionOf('3.5.0')).toBe('3.5.0');
  });
});

describe('registerClientRoutes', () => {
  it('answers /version from the version Status reports, asking once', async () => {
    let asked = 0;
    const server = await build({ serverVersion: async () => (asked++, '3.5.0') });
    for (let i = 0; i < 2; i++) {
      const answer = await server.inject({ url: '/version' });
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toEqual({ etcdserver: '3.5.0', etcdcluster: '3.5.0' });
    }
    expect(asked).toBe(1);
  });

  it('answers /version 503 with no version while no member has answered, then the version once one has', async () => {
    const member: { version?: string } = {};
    const server = await build({ serverVersion: async () => member.version ?? Promise.reject(new Error('no member answered')) });
    const before = await server.inject({ url: '/version' });
    expect([before.statusCode, before.headers['content-type'], before.json()]).toEqual([503, 'application/json', { etcdserver: 'not_decided', etcdcluster: 'not_decided' }]);
    member.version = '3.5.0';
    const after = await server.inject({ url: '/version' });
    expect([after.statusCode, after.json()]).toEqual([200, { etcdserver: '3.5.0', etcdcluster: '3.5.0' }]);
  });

  it('answers /health with etcd 3.4\'s text/plain JSON, 503 when unhealthy or failing', async () => {
    expect((await (await build()).inject({ url: '/health' })).body).toBe('{"health":"true"}');
    await app!.close();
    const failing = await build({ healthy: async () => Promise.reject(new Error('no member')) });
    const answer = await failing.inject({ url: '/health' });
    expect([answer.statusCode, answer.headers['content-type'], answer.body]).toEqual([503, 'text/plain; charset=utf-8', '{"health":"false"}']);
  });

  it('puts CORS headers on every answer, 404s included, and answers preflights', async () => {
    const server = await build();
    for (const request of [{ url: '/version' }, { url: '/nope' }, { url: '/v3/kv/range', method: 'OPTIONS' as const }]) {
      const answer = await server.inject(request);
      for (const [name, value] of Object.entries(CORS_HEADERS)) expect(answer.headers[name], `${request.url} ${name}`).toBe(value);
    }
  });

  it('gives etcd\'s plain-text 404 and 405', async () => {
    const server = await build();
    expect((await server.inject({ url: '/nope' })).body).toBe('404 page not found\n');
    expect((await server.inject({ url: '/v3/nope', method: 'POST' })).body).toBe('Not Found\n');
    expect((await server.inject({ url: '/v3beta/nope', method: 'POST' })).body).toBe('Not Found\n');
    const wrongMethod = await server.inject({ url: '/v3/kv/range' });
    expect([wrongMethod.statusCode, wrongMethod.body]).toEqual([405, 'Method Not Allowed\n']);
  });
});
