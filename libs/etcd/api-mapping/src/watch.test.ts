import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WatchRequest__Output, WatchResponse__Output } from '@ward/etcd/proto';
import type { ResponseContext } from './header';
import { encodeEtcdMessage } from './proto-codec';
import { normalize, watchCommand, watchResponse } from './test/arbitraries';
import { watchRequestFromProto, watchRequestToProto, watchResponseFromProto, watchResponseToProto, type WatchResponse } from './watch';
import { fragmentWatchResponse } from './watch-fragment';
import { etcdServiceDefinition } from '@ward/etcd/proto';

const context: ResponseContext = { clusterId: 1n, memberId: 2n, raftTerm: 3 };
const b = (text: string): Buffer => Buffer.from(text);
type Codec = { requestSerialize(v: unknown): Buffer; requestDeserialize(b: Buffer): unknown; responseSerialize(v: unknown): Buffer; responseDeserialize(b: Buffer): unknown };
const watchCodec = (etcdServiceDefinition('Watch') as unknown as Record<string, Codec>)['Watch']!;
const requestViaWire = (value: unknown): WatchRequest__Output => watchCodec.requestDeserialize(watchCodec.requestSerialize(value)) as WatchRequest__Output;
const responseViaWire = (value: unknown): WatchResponse__Output => watchCodec.responseDeserialize(watchCodec.responseSerialize(value)) as WatchResponse__Output;

describe('WatchRequest → command (etcd v3rpc watch recvLoop)', () => {
  it('replaces an empty key by \\x00 and keeps range ends with kv-store meanings', () => {
    const command = watchRequestFromProto(requestViaWire({ create_request: { range_end: b('\0') } }));
    expect(command.type).toBe('create');
    if (command.type !== 'create') return;
    expect([...command.request.key]).toEqual([0]);
    expect([...command.request.rangeEnd]).toEqual([0]);
  });

  it('maps every create field; unknown filter numbers are ignored as etcd does', () => {
    const command = watchRequestFromProto(
      requestViaWire({
        create_request: { key: b('a'), range_end: b('b'), start_revision: '12', progress_notify: true, filters: ['Nodelete', 5, 'Noput'], prev_kv: true, watch_id: '9', fragment: true },
      }),
    );
    expect(normalize(command)).toEqual(
      normalize({
        type: 'create',
        request: { key: b('a'), rangeEnd: b('b'), startRevision: 12, progressNotify: true, filters: ['NODELETE', 'NOPUT'], prevKv: true, watchId: 9n, fragment: true },
      }),
    );
  });

  it('cancel, progress, and a request with nothing set (ignored, as etcd)', () => {
    expect(watchRequestFromProto(requestViaWire({ cancel_request: { watch_id: '-1' } }))).toEqual({ type: 'cancel', watchId: -1n });
    expect(watchRequestFromProto(requestViaWire({ progress_request: {} }))).toEqual({ type: 'progress' });
    expect(watchRequestFromProto(requestViaWire({}))).toEqual({ type: 'ignored' });
  });

  it('domain → proto → bytes → proto → domain is identity', () => {
    fc.assert(
      fc.property(watchCommand, (command) => {
        expect(normalize(watchRequestFromProto(requestViaWire(watchRequestToProto(command))))).toEqual(normalize(command));
      }),
    );
  });
});

describe('WatchResponse mapping', () => {
  it('a canceled create as etcd sends it for a refused permission check', () => {
    const response: WatchResponse = {
      revision: 8,
      watchId: -1n,
      created: true,
      canceled: true,
      compactRevision: 0,
      cancelReason: 'rpc error: code = PermissionDenied desc = etcdserver: permission denied',
      fragment: false,
      events: [],
    };
    const proto = responseViaWire(watchResponseToProto(response, context));
    expect(proto).toMatchObject({ watch_id: '-1', created: true, canceled: true, cancel_reason: response.cancelReason, header: { revision: '8', member_id: '2' } });
  });

  it('delete events carry only the key and the deleting revision', () => {
    const proto = responseViaWire(
      watchResponseToProto(
        {
          revision: 5,
          watchId: 0n,
          created: false,
          canceled: false,
          compactRevision: 0,
          cancelReason: '',
          fragment: false,
          events: [{ type: 'DELETE', kv: { key: b('k'), createRevision: 0, modRevision: 5, version: 0, value: new Uint8Array(0), lease: 0n } }],
        },
        context,
      ),
    );
    expect(proto.events[0]).toMatchObject({ type: 'Delete', kv: { mod_revision: '5', create_revision: '0' }, prev_kv: null });
  });

  it('domain → proto → bytes → proto → domain is identity', () => {
    fc.assert(
      fc.property(watchResponse, (response) => {
        expect(normalize(watchResponseFromProto(responseViaWire(watchResponseToProto(response, context))))).toEqual(normalize(response));
      }),
    );
  });
});

describe('fragmentWatchResponse (etcd sendFragments)', () => {
  const event = (i: number) => ({ type: 'PUT' as const, kv: { key: b(`key-${i}`), createRevision: i, modRevision: i, version: 1, value: new Uint8Array(100).fill(i), lease: 0n } });
  const response = (count: number): WatchResponse__Output =>
    watchResponseToProto({ revision: 50, watchId: 3n, created: false, canceled: false, compactRevision: 0, cancelReason: '', fragment: false, events: Array.from({ length: count }, (_, i) => event(i)) }, context);

  it('leaves a response below the limit whole', () => {
    expect(fragmentWatchResponse(response(3), 10_000)).toHaveLength(1);
  });

  it('splits a large one into parts below the limit, in order, the last unmarked', () => {
    const whole = response(20);
    const parts = fragmentWatchResponse(whole, 600);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.slice(0, -1).every((p) => p.fragment)).toBe(true);
    expect(parts.at(-1)!.fragment).toBe(false);
    for (const part of parts) {
      expect(part.events.length).toBeGreaterThanOrEqual(1);
      if (part.events.length > 1) expect(encodeEtcdMessage('etcdserverpb.WatchResponse', part).length).toBeLessThan(600);
    }
    expect(parts.flatMap((p) => p.events.map((e) => e.kv!.key.toString()))).toEqual(whole.events.map((e) => e.kv!.key.toString()));
  });

  it('sends one event alone even when it is over the limit', () => {
    const parts = fragmentWatchResponse(response(3), 10);
    expect(parts.map((p) => p.events.length)).toEqual([1, 1, 1]);
  });
});
