import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { wireError } from '@ward/etcd/wire-errors';
import { HttpResponseStream, streamErrorObject } from './json-streams';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
});

/** One request to a server whose handler drives an HttpResponseStream; the raw answer. */
async function answer(drive: (stream: HttpResponseStream) => void): Promise<{ status: number; contentType: string | null; body: string }> {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    drive(new HttpResponseStream(request, response, 'etcdserverpb.LeaseKeepAliveResponse', { stallTimeoutMs: 60_000, extraHeaders: { 'access-control-allow-origin': '*' }, logUnexpected: () => undefined }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const response = await fetch(`http://127.0.0.1:${address.port}/`, { method: 'POST', body: '{}' });
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

describe('streamErrorObject', () => {
  it('is grpc-gateway\'s stream error, as etcd 3.4.23 writes it when a watch loses its leader', () => {
    expect(JSON.stringify(streamErrorObject(14, 'etcdserver: no leader'))).toBe('{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","http_status":"Service Unavailable"}}');
    expect(streamErrorObject(7, 'etcdserver: permission denied').error).toMatchObject({ http_code: 403, http_status: 'Forbidden' });
    expect(streamErrorObject(8, 'etcdserver: too many requests').error).toMatchObject({ http_code: 429, http_status: 'Too Many Requests' });
  });
});

describe('HttpResponseStream', () => {
  it('answers results one per line, then a failure as the stream error object without a line break', async () => {
    const got = await answer((stream) => {
      stream.write({ ID: '5', TTL: '60' });
      stream.fail(wireError('NoLeader'));
    });
    expect(got.status).toBe(200);
    const [line, error, ...rest] = got.body.split('\n');
    expect(JSON.parse(line!)).toEqual({ result: { ID: '5', TTL: '60' } });
    expect(JSON.parse(error!)).toEqual(streamErrorObject(14, 'etcdserver: no leader'));
    expect(rest).toEqual([]);
  });

  it('a failure before any answer takes the code\'s HTTP status, with the same error object', async () => {
    const got = await answer((stream) => stream.fail(wireError('TooManyRequests')));
    expect([got.status, got.contentType]).toEqual([429, 'application/json']);
    expect(got.body).toBe(JSON.stringify(streamErrorObject(8, 'etcdserver: too many requests')));
  });
});
