import { describe, expect, it } from 'vitest';
import { externalTargetConfig, startWardTarget } from './external-target';

describe('the target switch (WARD_TARGET_ENDPOINTS)', () => {
  it('is off when unset or empty', () => {
    expect(externalTargetConfig({})).toBeUndefined();
    expect(externalTargetConfig({ WARD_TARGET_ENDPOINTS: ' ' })).toBeUndefined();
  });

  it('reads the endpoints and the HTTP URLs in order', () => {
    expect(externalTargetConfig({ WARD_TARGET_ENDPOINTS: '127.0.0.1:2379, 127.0.0.1:22379', WARD_TARGET_HTTP_URLS: 'http://127.0.0.1:2381,http://127.0.0.1:22381/' })).toEqual({
      endpoints: ['127.0.0.1:2379', '127.0.0.1:22379'],
      httpUrls: ['http://127.0.0.1:2381', 'http://127.0.0.1:22381'],
    });
  });

  it('refuses malformed values with the variable named', () => {
    expect(() => externalTargetConfig({ WARD_TARGET_ENDPOINTS: 'localhost' })).toThrow(/WARD_TARGET_ENDPOINTS: "localhost" is not host:port/);
    expect(() => externalTargetConfig({ WARD_TARGET_ENDPOINTS: 'a:1', WARD_TARGET_HTTP_URLS: 'ftp://a:2' })).toThrow(/WARD_TARGET_HTTP_URLS/);
    expect(() => externalTargetConfig({ WARD_TARGET_ENDPOINTS: 'a:1,b:2', WARD_TARGET_HTTP_URLS: 'http://a:3' })).toThrow(/one URL per endpoint/);
    expect(() => externalTargetConfig({ WARD_TARGET_ENDPOINTS: Array.from({ length: 17 }, (_, i) => `h:${i + 1}`).join(',') })).toThrow(/at most 16/);
  });

  it('with the switch set, refuses options only local processes take', async () => {
    const saved = process.env.WARD_TARGET_ENDPOINTS;
    process.env.WARD_TARGET_ENDPOINTS = '127.0.0.1:1';
    try {
      await expect(startWardTarget({ gatewayEnv: { GATEWAY_LOG_LEVEL: 'debug' } })).rejects.toThrow(/asks for gatewayEnv, which/);
      await expect(startWardTarget({ authToken: 'jwt' })).rejects.toThrow(/asks for authToken, which/);
    } finally {
      if (saved === undefined) delete process.env.WARD_TARGET_ENDPOINTS;
      else process.env.WARD_TARGET_ENDPOINTS = saved;
    }
  });
});
