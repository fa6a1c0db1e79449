import { describe, expect, it } from 'vitest';
import { ConfigError } from '@ward/platform/config';
import { loadRaftNodeConfig } from './config';
import { clusterIdOf, parseMember, parseMembers } from './members';

const MEMBERS = '1=node-1=127.0.0.1:23801=127.0.0.1:23791,2=node-2=127.0.0.1:23802=127.0.0.1:23792,3=node-3=127.0.0.1:23803=127.0.0.1:23793';
const env = (extra: Record<string, string> = {}) => ({ RAFT_NODE_MEMBER_ID: '2', RAFT_NODE_MEMBERS: MEMBERS, RAFT_NODE_DATA_DIR: '/tmp/x', ...extra });

function problems(extra: Record<string, string>): readonly string[] {
  try {
    loadRaftNodeConfig(env(extra));
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('raft-node configuration', () => {
  it('resolves defaults (etcd timing: 100 ms ticks, election 10, heartbeat 1) and listens where the member list says', () => {
    const config = loadRaftNodeConfig(env());
    expect(config.memberId).toBe(2n);
    expect([config.tickMs, config.electionTicks, config.heartbeatTicks]).toEqual([100, 10, 1]);
    expect(config.apiListen).toEqual({ host: '127.0.0.1', port: 23792 });
    expect(config.peerListen).toEqual({ host: '127.0.0.1', port: 23802 });
    expect(config.members.map((m) => m.name)).toEqual(['node-1', 'node-2', 'node-3']);
    expect(config.clusterId).toBe(clusterIdOf([3n, 1n, 2n]));
  });

  it('refuses a missing member id, data dir or member list, and names each problem', () => {
    expect(problems({ RAFT_NODE_MEMBER_ID: '', RAFT_NODE_DATA_DIR: '' })).toEqual(['RAFT_NODE_MEMBER_ID is required', 'RAFT_NODE_DATA_DIR is required']);
  });

  it('refuses cross-field mistakes: election <= heartbeat, a member id not in the list, duplicates', () => {
    expect(problems({ RAFT_NODE_ELECTION_TICKS: '2', RAFT_NODE_HEARTBEAT_TICKS: '2' })).toEqual(['RAFT_NODE_ELECTION_TICKS must be greater than RAFT_NODE_HEARTBEAT_TICKS']);
    expect(problems({ RAFT_NODE_MEMBER_ID: '4' })).toEqual(['RAFT_NODE_MEMBER_ID 4 is not in RAFT_NODE_MEMBERS']);
    expect(problems({ RAFT_NODE_MEMBERS: '1=a=h:1=h:2,1=b=h:3=h:4', RAFT_NODE_MEMBER_ID: '1' })).toEqual(['duplicate member id 1']);
    expect(problems({ RAFT_NODE_MEMBERS: '1=a=h:1=h:2,2=a=h:3=h:4', RAFT_NODE_MEMBER_ID: '1' })).toEqual(['duplicate member name a']);
  });

  it('simple-token bounds: 100,000 in total and 500 per user by default; the per-user bound cannot exceed the total', () => {
    const config = loadRaftNodeConfig(env());
    expect([config.maxSimpleTokensCount, config.maxSimpleTokensPerUserCount]).toEqual([100_000, 10_000]);
    expect(problems({ RAFT_NODE_MAX_SIMPLE_TOKENS_COUNT: '20', RAFT_NODE_MAX_SIMPLE_TOKENS_PER_USER_COUNT: '21' })).toEqual([
      'RAFT_NODE_MAX_SIMPLE_TOKENS_PER_USER_COUNT must not exceed RAFT_NODE_MAX_SIMPLE_TOKENS_COUNT',
    ]);
  });

  it('takes the mutual TLS files all together or not at all', () => {
    expect(problems({ RAFT_NODE_TLS_CERT_FILE: '/m.crt', RAFT_NODE_TLS_KEY_FILE: '/m.key' })).toEqual([
      'RAFT_NODE_TLS_CERT_FILE, RAFT_NODE_TLS_KEY_FILE and RAFT_NODE_TLS_CA_FILE go together',
    ]);
    const config = loadRaftNodeConfig(env({ RAFT_NODE_TLS_CERT_FILE: '/m.crt', RAFT_NODE_TLS_KEY_FILE: '/m.key', RAFT_NODE_TLS_CA_FILE: '/ca.crt' }));
    expect([config.tlsCertFile, config.tlsKeyFile, config.tlsCaFile]).toEqual(['/m.crt', '/m.key', '/ca.crt']);
  });

  it('writes key-space format 2 unless told 1 (for a rolling upgrade), and refuses any other', () => {
    expect(loadRaftNodeConfig(env()).snapshotFormat).toBe('2');
    expect(loadRaftNodeConfig(env({ RAFT_NODE_SNAPSHOT_FORMAT: '1' })).snapshotFormat).toBe('1');
    expect(problems({ RAFT_NODE_SNAPSHOT_FORMAT: '3' })[0]).toMatch(/^RAFT_NODE_SNAPSHOT_FORMAT: /);
  });

  it('refuses unknown variables and out-of-range values', () => {
    expect(problems({ RAFT_NODE_TICK_MS: '0' })[0]).toMatch(/^RAFT_NODE_TICK_MS: must be an integer in \[1, 10000\]/);
    expect(problems({ RAFT_NODE_ELECTION_TIMEOUT: '5' })[0]).toMatch(/^RAFT_NODE_ELECTION_TIMEOUT: unknown option/);
  });
});

describe('member list', () => {
  it('parses id=name=peer=api with decimal or hex ids', () => {
    expect(parseMember('0x8e9e05c52164694d=infra1=10.0.0.1:2380=10.0.0.1:2379')).toEqual({
      id: 0x8e9e05c52164694dn,
      name: 'infra1',
      peerAddress: '10.0.0.1:2380',
      apiAddress: '10.0.0.1:2379',
    });
  });

  it('refuses malformed members', () => {
    expect(() => parseMember('0=a=h:1=h:2')).toThrow(/must be in \[1, 2\^64 - 1\]/);
    expect(() => parseMember('1=a=h:1')).toThrow(/must be id=name/);
    expect(() => parseMember('1=a=h:99999=h:2')).toThrow(/port must be at most 65535/);
    expect(() => parseMembers([])).toThrow(/empty/);
  });

  it('derives the cluster id from the sorted member ids only (etcd: SHA-1, first 8 bytes)', () => {
    expect(clusterIdOf([1n, 2n, 3n])).toBe(clusterIdOf([3n, 2n, 1n]));
    expect(clusterIdOf([1n, 2n, 3n])).not.toBe(clusterIdOf([1n, 2n, 4n]));
    // sha1(00..01 00..02 00..03) = 70b9aefc37c00c85... (computed independently)
    expect(clusterIdOf([1n, 2n, 3n]).toString(16)).toBe('70b9aefc37c00c85');
  });
});
