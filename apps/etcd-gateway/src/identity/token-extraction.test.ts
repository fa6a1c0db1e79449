import { describe, expect, it } from 'vitest';
import { Metadata } from '@grpc/grpc-js';
import type { Credentials } from './identity';
import { grpcCredentials, stripBearer, tokenFromHeaders, tokenFromMetadata } from './token-extraction';

function metadata(entries: Array<[string, string]>): Metadata {
  const md = new Metadata();
  for (const [key, value] of entries) md.add(key, value);
  return md;
}

describe('tokenFromMetadata', () => {
  it.each([
    { name: 'no token', entries: [], expected: undefined },
    { name: 'token key', entries: [['token', 'abc.1']], expected: 'abc.1' },
    { name: 'authorization key', entries: [['authorization', 'abc.2']], expected: 'abc.2' },
    { name: 'token wins over authorization', entries: [['authorization', 'b.2'], ['token', 'a.1']], expected: 'a.1' },
    { name: 'first value only', entries: [['token', 'first'], ['token', 'second']], expected: 'first' },
    { name: 'Bearer prefix stripped (3.7)', entries: [['authorization', 'Bearer xyz']], expected: 'xyz' },
    { name: 'Bearer on the token key too', entries: [['token', 'Bearer xyz']], expected: 'xyz' },
    { name: 'bearer is case-sensitive, as etcd', entries: [['token', 'bearer xyz']], expected: 'bearer xyz' },
    { name: 'present but empty is a token', entries: [['token', '']], expected: '' },
    { name: 'other keys are not tokens (etcd TestAuthInfoFromCtx: "tokens")', entries: [['tokens', 'x']], expected: undefined },
  ] as const)('$name', ({ entries, expected }) => {
    const md = metadata(entries as unknown as Array<[string, string]>);
    expect(tokenFromMetadata({ metadataValue: (key) => md.get(key)[0] })).toBe(expected);
  });
});

describe('tokenFromHeaders', () => {
  it('reads Authorization (node lower-cases header names) and strips Bearer', () => {
    expect(tokenFromHeaders({ authorization: 'Bearer t.1' })).toBe('t.1');
    expect(tokenFromHeaders({ authorization: 't.1' })).toBe('t.1');
    expect(tokenFromHeaders({ authorization: ['a', 'b'] })).toBe('a');
    expect(tokenFromHeaders({ token: 'not-read' })).toBeUndefined();
  });

  it('stripBearer removes exactly one prefix', () => {
    expect(stripBearer('Bearer Bearer x')).toBe('Bearer x');
    expect(stripBearer('Bearerx')).toBe('Bearerx');
  });
});

describe('grpcCredentials', () => {
  const call = (md: Metadata, peerCommonName: string | undefined, peer: string) => ({ metadataValue: (key: string) => md.get(key)[0], peerCommonName, peer });
  /** What the credentials answer (commonName and address are read when asked). */
  const read = (credentials: Credentials) => ({ token: credentials.token, commonName: credentials.commonName, address: credentials.address });

  it('carries the verified CommonName beside the token, except through a grpc-gateway', () => {
    const plain = new Metadata();
    expect(read(grpcCredentials(call(plain, undefined, '10.0.0.7:4242')))).toEqual({ token: undefined, address: '10.0.0.7' });
    expect(read(grpcCredentials(call(plain, 'example.com', '[::1]:4242')))).toEqual({ token: undefined, commonName: 'example.com', address: '[::1]' });
    plain.set('token', 'abc');
    expect(read(grpcCredentials(call(plain, '', '10.0.0.7:4242')))).toEqual({ token: 'abc', commonName: '', address: '10.0.0.7' });
    const viaGateway = new Metadata();
    viaGateway.set('grpcgateway-accept', 'application/json');
    expect(read(grpcCredentials(call(viaGateway, 'example.com', '10.0.0.7:4242')))).toEqual({ token: undefined, address: '10.0.0.7' });
  });
});
