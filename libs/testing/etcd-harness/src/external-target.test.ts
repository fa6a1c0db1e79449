import { describe, expect, it } from 'vitest';
import { containerChanges, externalTargetConfig, startWardTarget } from './external-target';

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

  it('takes the compose project to watch, and refuses a name compose would not make', () => {
    expect(externalTargetConfig({ WARD_TARGET_ENDPOINTS: 'a:1', WARD_COMPOSE_PROJECT: 'ward-test' })).toEqual({ endpoints: ['a:1'], httpUrls: [], composeProject: 'ward-test' });
    expect(() => externalTargetConfig({ WARD_TARGET_ENDPOINTS: 'a:1', WARD_COMPOSE_PROJECT: 'x; rm -rf /' })).toThrow(/not a compose project name/);
  });

  it('names the containers that exited, restarted, went or came since the start', () => {
    const start = new Map([
      ['/p_raft-node-1_1', 'running 2026-12-03T08:00:00Z'],
      ['/p_raft-node-2_1', 'running 2026-12-03T08:00:01Z'],
      ['/p_etcd-gateway-1_1', 'running 2026-12-03T08:00:02Z'],
    ]);
    expect(containerChanges(start, new Map(start))).toEqual([]);
    const now = new Map(start);
    now.set('/p_raft-node-1_1', 'running 2026-12-03T08:05:00Z');
    now.set('/p_raft-node-2_1', 'exited 2026-12-03T08:00:01Z');
    now.delete('/p_etcd-gateway-1_1');
    now.set('/p_extra_1', 'running 2026-12-03T08:06:00Z');
    expect(containerChanges(start, now)).toEqual([
      '/p_raft-node-1_1: running 2026-12-03T08:00:00Z -> running 2026-12-03T08:05:00Z',
      '/p_raft-node-2_1: running 2026-12-03T08:00:01Z -> exited 2026-12-03T08:00:01Z',
      '/p_etcd-gateway-1_1 is gone',
      '/p_extra_1 is new: running 2026-12-03T08:06:00Z',
    ]);
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
