import { describe, expect, it } from 'vitest';
import { etcdctlError, normalizeStderr, normalizeStdout } from './normalize';

const context = { baselineRevision: 10, endpoints: ['127.0.0.1:40001'] };

describe('normalizeStdout', () => {
  it('replaces ids and terms but keeps revisions as offsets from the baseline', () => {
    const raw =
      '{"header":{"cluster_id":13455796455940752355,"member_id":443629905751424238,"revision":12,"raft_term":2},' +
      '"kvs":[{"key":"Zm9v","create_revision":9,"mod_revision":12,"version":3,"value":"YmFy"}],"count":1}';
    expect(normalizeStdout(raw, context)).toBe(
      '{"header":{"cluster_id":"<cluster_id>","member_id":"<member_id>","revision":"base+2","raft_term":"<raft_term>"},' +
        '"kvs":[{"key":"Zm9v","create_revision":"base-1","mod_revision":"base+2","version":3,"value":"YmFy"}],"count":1}',
    );
  });

  it('keeps a different revision numbering visible', () => {
    const a = normalizeStdout('{"header":{"revision":11}}', context);
    const b = normalizeStdout('{"header":{"revision":12}}', context);
    expect(a).not.toBe(b);
  });

  it('leaves plain text and values alone, except endpoint addresses', () => {
    expect(normalizeStdout('foo\nrevision 12\n127.0.0.1:40001 is healthy', context)).toBe('foo\nrevision 12\n<endpoint> is healthy');
  });

  it('hides the ID `lease grant` chose and a lease’s remaining seconds, and only those', () => {
    expect(normalizeStdout('lease 1a0e6daa00000004 granted with TTL(10s)\n', context)).toBe('lease <id> granted with TTL(10s)\n');
    expect(normalizeStdout('lease 00000000000003e8 granted with TTL(60s), remaining(59s), attached keys([foo])', context)).toBe(
      'lease 00000000000003e8 granted with TTL(60s), remaining(<s>), attached keys([foo])',
    );
    expect(normalizeStdout('lease 00000000000003e8 keepalived with TTL(60)', context)).toBe('lease 00000000000003e8 keepalived with TTL(60)');
  });

  it('hides how long a health probe took, and only that', () => {
    const line = (took: string) => `127.0.0.1:40001 is healthy: successfully committed proposal: took = ${took}`;
    const expected = '<endpoint> is healthy: successfully committed proposal: took = <duration>';
    for (const took of ['2.345678ms', '812.5µs', '1.5s', '1m2.5s']) expect(normalizeStdout(line(took), context)).toBe(expected);
    expect(normalizeStdout('took = fast', context)).toBe('took = fast');
    expect(normalizeStderr(line('5.300602ms'), context)).toBe(expected);
  });
});

describe('normalizeStderr', () => {
  it('reduces the Go client log lines to level, message, attempt and error', () => {
    const raw =
      '{"level":"warn","ts":"2026-11-29T17:12:15.029Z","caller":"clientv3/retry_interceptor.go:62","msg":"retrying of unary invoker failed",' +
      '"target":"endpoint://client-5121523f-b3c9-4a4d-9887-0e1b01619b72/127.0.0.1:40001","attempt":0,' +
      '"error":"rpc error: code = InvalidArgument desc = etcdserver: role name is empty"}\nError: etcdserver: role name is empty\n';
    expect(normalizeStderr(raw, context)).toBe(
      'LOG warn | retrying of unary invoker failed | attempt=0 | error=rpc error: code = InvalidArgument desc = etcdserver: role name is empty\n' +
        'Error: etcdserver: role name is empty\n',
    );
  });

  it('keeps a line that only looks like a log line', () => {
    expect(normalizeStderr('{"level": broken', context)).toBe('{"level": broken');
  });
});

describe('etcdctlError', () => {
  it('finds the Error: line', () => {
    expect(etcdctlError('LOG x\nError: etcdserver: permission denied\n')).toBe('etcdserver: permission denied');
    expect(etcdctlError('nothing')).toBeUndefined();
  });
});
