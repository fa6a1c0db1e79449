import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from './free-port';
import { casRequest, deleteRequest, getRequest, putRequest } from './kv-requests';

const text = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes);

describe('kv requests', () => {
  it('builds anonymous put / get / delete requests for one key', () => {
    const put = putRequest('k', 'v');
    expect(put.header).toEqual({ id: 0n, username: '', authRevision: 0 });
    expect(put.operation.type === 'put' && [text(put.operation.request.key), text(put.operation.request.value)]).toEqual(['k', 'v']);
    expect(getRequest('k').operation.type).toBe('range');
    expect(deleteRequest('k').operation.type).toBe('deleteRange');
  });

  it('compare-and-set compares the value, or version 0 for "absent"', () => {
    const absent = casRequest('k', null, 'v');
    const present = casRequest('k', 'old', 'v');
    if (absent.operation.type !== 'txn' || present.operation.type !== 'txn') throw new Error('not a txn');
    expect(absent.operation.request.compare).toEqual([{ target: 'VERSION', result: 'EQUAL', key: new TextEncoder().encode('k'), version: 0 }]);
    expect(present.operation.request.compare[0]).toMatchObject({ target: 'VALUE', result: 'EQUAL' });
    expect(present.operation.request.success.map((op) => op.type)).toEqual(['put']);
    expect(present.operation.request.failure).toEqual([]);
  });
});

describe('freePorts', () => {
  it('returns distinct bindable ports', async () => {
    const ports = await freePorts(5);
    expect(new Set(ports).size).toBe(5);
    expect(ports.every((p) => p > 0 && p < 65536)).toBe(true);
    // Outside the kernel's ephemeral range: no outgoing connection takes one meanwhile.
    const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    expect(ports.every((p) => p >= 10_000 && p < ephemeralLow)).toBe(true);
    for (const port of ports) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
