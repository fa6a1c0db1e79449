import { describe, expect, it } from 'vitest';
import { ConfigError, bool, defineConfig, describeConfig, int, list, loadConfig, oneOf, string } from './index';

const schema = defineConfig({
  prefix: 'RAFT_NODE',
  options: {
    electionTimeoutTicks: int({ default: 10, min: 2, max: 1000, why: 'ticks without a leader before campaigning' }),
    heartbeatIntervalTicks: int({ default: 1, min: 1, max: 100, why: 'ticks between leader heartbeats' }),
    dataDir: string({ default: './data', why: 'where the WAL and snapshots live' }),
    preVote: bool({ default: true, why: 'avoid disruptive elections by partitioned nodes' }),
    logLevel: oneOf({ default: 'info', values: ['debug', 'info', 'warn', 'error'], why: 'log verbosity' }),
    peers: list({ default: [], pattern: /^\w+=[\w.:]+$/, why: 'other members as id=host:port' }),
    jwtSigningKey: string({ default: '', why: 'PEM private key for tokens', secret: true, pattern: /^-----BEGIN/ }),
  },
  validate: (c) =>
    c.electionTimeoutTicks > c.heartbeatIntervalTicks ? [] : ['RAFT_NODE_ELECTION_TIMEOUT_TICKS must exceed RAFT_NODE_HEARTBEAT_INTERVAL_TICKS'],
});

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(schema, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies defaults and parses every kind from prefixed variables', () => {
    const config = loadConfig(schema, {
      RAFT_NODE_ELECTION_TIMEOUT_TICKS: '20',
      RAFT_NODE_PRE_VOTE: 'false',
      RAFT_NODE_PEERS: 'a=127.0.0.1:1, b=127.0.0.1:2',
      RAFT_NODE_LOG_LEVEL: 'debug',
      OTHER_APP_SETTING: 'ignored',
    });
    expect(config).toEqual({
      electionTimeoutTicks: 20,
      heartbeatIntervalTicks: 1,
      dataDir: './data',
      preVote: false,
      logLevel: 'debug',
      peers: ['a=127.0.0.1:1', 'b=127.0.0.1:2'],
      jwtSigningKey: '',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('rejects unknown prefixed keys, naming the known ones', () => {
    const problems = problemsOf({ RAFT_NODE_ELECTION_TIMEOUT: '5' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('RAFT_NODE_ELECTION_TIMEOUT: unknown option');
    expect(problems[0]).toContain('RAFT_NODE_ELECTION_TIMEOUT_TICKS');
  });

  it('rejects out-of-range and malformed values, reporting all problems at once', () => {
    const problems = problemsOf({
      RAFT_NODE_ELECTION_TIMEOUT_TICKS: '1',
      RAFT_NODE_HEARTBEAT_INTERVAL_TICKS: '1.5',
      RAFT_NODE_PRE_VOTE: 'maybe',
      RAFT_NODE_LOG_LEVEL: 'loud',
      RAFT_NODE_PEERS: 'a=ok:1,not valid',
    });
    expect(problems).toEqual([
      'RAFT_NODE_ELECTION_TIMEOUT_TICKS: must be an integer in [2, 1000], got "1"',
      'RAFT_NODE_HEARTBEAT_INTERVAL_TICKS: must be an integer in [1, 100], got "1.5"',
      'RAFT_NODE_PRE_VOTE: must be true or false, got "maybe"',
      'RAFT_NODE_LOG_LEVEL: must be one of debug, info, warn, error, got "loud"',
      'RAFT_NODE_PEERS: item "not valid" must match /^\\w+=[\\w.:]+$/',
    ]);
  });

  it('checks cross-field invariants after the fields parse', () => {
    const problems = problemsOf({ RAFT_NODE_ELECTION_TIMEOUT_TICKS: '5', RAFT_NODE_HEARTBEAT_INTERVAL_TICKS: '5' });
    expect(problems).toEqual(['RAFT_NODE_ELECTION_TIMEOUT_TICKS must exceed RAFT_NODE_HEARTBEAT_INTERVAL_TICKS']);
  });

  it('never echoes a secret value in an error', () => {
    const secret = 'hunter2-super-secret-key-material';
    let message = '';
    try {
      loadConfig(schema, { RAFT_NODE_JWT_SIGNING_KEY: secret });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('RAFT_NODE_JWT_SIGNING_KEY');
    expect(message).not.toContain(secret);
    expect(message).toContain('<redacted>');
    expect(describeConfig(schema)).not.toContain(secret);
  });
});

describe('defineConfig', () => {
  it('requires number options to end with a unit', () => {
    expect(() =>
      defineConfig({ prefix: 'X', options: { electionTimeout: int({ default: 1, min: 0, max: 2, why: 'w' }) } }),
    ).toThrow(/must end with its unit/);
  });

  it('rejects defaults outside their range and a malformed prefix', () => {
    expect(() => int({ default: 0, min: 1, max: 2, why: 'w' })).toThrow(TypeError);
    expect(() => defineConfig({ prefix: 'raft-node', options: {} })).toThrow(/SCREAMING_SNAKE/);
    expect(() => oneOf({ default: 'x' as 'a', values: ['a'], why: 'w' })).toThrow(TypeError);
  });

  it('describes every option with its variable name, default and why', () => {
    const text = describeConfig(schema);
    expect(text).toContain('RAFT_NODE_ELECTION_TIMEOUT_TICKS=10 [2..1000]');
    expect(text).toContain('ticks without a leader before campaigning');
    expect(text).toContain('RAFT_NODE_JWT_SIGNING_KEY=<secret>');
  });
});
