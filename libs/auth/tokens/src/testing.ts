// Test helpers for this project's tests only (never exported by index.ts).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ManualClock } from '@ward/shared/clock';
import type { JwtPolicy } from './jwt-options';

const TESTDATA = resolve(import.meta.dirname, '../testdata/etcd-3.4.23');

export interface EtcdTokenVector {
  readonly signMethod: string;
  readonly token: string;
  readonly privateKeyFile: string;
  readonly publicKeyFile: string | null;
}

export function etcdVectors(): { username: string; tokens: EtcdTokenVector[] } {
  return JSON.parse(readFileSync(resolve(TESTDATA, 'tokens.json'), 'utf8')) as { username: string; tokens: EtcdTokenVector[] };
}

export function testKeyBytes(file: string): Uint8Array {
  return new Uint8Array(readFileSync(resolve(TESTDATA, 'keys', file)));
}

export function testKeyPem(file: string): string {
  return readFileSync(resolve(TESTDATA, 'keys', file), 'utf8');
}

export async function readTestKeyFile(path: string): Promise<Uint8Array> {
  return new Uint8Array(readFileSync(path));
}

export function testKeyPath(file: string): string {
  return resolve(TESTDATA, 'keys', file);
}

/** A policy with the given clock and overrides: strict defaults, 5-minute tokens. */
export function testPolicy(clock: ManualClock, overrides: Partial<JwtPolicy> = {}): JwtPolicy {
  return {
    ttlMs: 300_000,
    clockToleranceSeconds: 0,
    maxTokenLengthChars: 8192,
    requireExpiry: true,
    maxLifetimeSeconds: 86_400,
    includeKeyIdHeader: false,
    clock,
    ...overrides,
  };
}

/** The payload of a compact JWS, decoded. */
export function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

export function headerOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

export function b64json(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
