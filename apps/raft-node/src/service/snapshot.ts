// etcd's Maintenance.Snapshot at the leader: the admin check (as Maintain), then a backup file
// (backup/backup-file.ts) of the state machine at this member's applied index, streamed as
// etcdserverpb.SnapshotResponse messages of at most 32 KiB of blob (etcd's chunk size), each
// written only once the stream took the previous ones (backpressure). At most
// MAX_SNAPSHOT_STREAMS streams at a time per member; beyond, `etcdserver: too many requests`. A
// reader that takes nothing for `snapshotStallTimeoutMs` loses its stream, which frees the slot
// and the file.
import { constants as http2Constants } from 'node:http2';
import type { ServerWritableStream } from '@grpc/grpc-js';
import { encodeEtcdMessage, responseHeaderToProto } from '@ward/etcd/api-mapping';
import type { NodeResponse, NodeSnapshotRequest__Output } from '@ward/etcd/proto';
import { encodeBackup } from '../backup/backup-file';
import { responseAnswer, wireErrorAnswer } from './answers';
import { adminRefusal } from './maintain';
import { responseContext, type NodeCore } from './node-core';

const SNAPSHOT_CHUNK_BYTES = 32 * 1024;
const MAX_SNAPSHOT_STREAMS = 2;

type SnapshotCall = ServerWritableStream<NodeSnapshotRequest__Output, NodeResponse>;

type Drain = 'drained' | 'closed' | 'stalled';

/** Resolves once the stream drained its buffer, or closed / was cancelled, or took nothing for `stallMs`. */
function drained(call: SnapshotCall, stallMs: number): Promise<Drain> {
  return new Promise((resolve) => {
    const done = (outcome: Drain) => (): void => {
      clearTimeout(timer);
      call.off('drain', onDrain);
      call.off('close', onClose);
      call.off('cancelled', onClose);
      call.off('error', onClose);
      resolve(outcome);
    };
    const onDrain = done('drained');
    const onClose = done('closed');
    const timer = setTimeout(done('stalled'), stallMs);
    call.once('drain', onDrain);
    call.once('close', onClose);
    call.once('cancelled', onClose);
    call.once('error', onClose);
  });
}

/**
 * Ends a stalled stream with RST_STREAM (CANCEL): a status cannot be sent while the reader's flow
 * control window is full, and grpc-js offers servers no public cancel. The HTTP/2 stream is
 * reached through the grpc-js call (no server interceptors are installed); without it the
 * writable side is only destroyed, which still frees the slot and the file.
 */
export function resetStream(call: { destroy(): void }): void {
  const h2 = (call as unknown as { call?: { stream?: { close?: (code: number) => void } } }).call?.stream;
  if (typeof h2?.close === 'function') h2.close(http2Constants.NGHTTP2_CANCEL);
  call.destroy();
}

export class SnapshotStreams {
  private active = 0;

  constructor(private readonly core: NodeCore) {}

  async serve(request: NodeSnapshotRequest__Output, call: SnapshotCall): Promise<void> {
    const core = this.core;
    const refusal = this.refusal(request);
    if (refusal !== undefined) {
      call.write(refusal);
      call.end();
      return;
    }
    this.active++;
    try {
      // One synchronous read of the state machine: the state, its applied index and revision
      // belong to the same moment.
      const applier = core.stateMachine.applier;
      const revision = applier.keySpaceView.currentRevision;
      const file = encodeBackup({
        index: core.stateMachine.appliedIndex,
        term: core.driver.currentTerm,
        revision,
        clusterId: core.config.clusterId,
        state: core.stateMachine.snapshotData(),
      });
      const header = responseHeaderToProto(responseContext(core), revision);
      for (let offset = 0; offset < file.length; offset += SNAPSHOT_CHUNK_BYTES) {
        if (call.cancelled) return;
        const blob = file.subarray(offset, Math.min(file.length, offset + SNAPSHOT_CHUNK_BYTES));
        const message = encodeEtcdMessage('etcdserverpb.SnapshotResponse', { header, remaining_bytes: file.length - offset - blob.length, blob });
        if (call.write(responseAnswer(message))) continue;
        const outcome = await drained(call, core.config.snapshotStallTimeoutMs);
        if (outcome === 'closed') return;
        if (outcome === 'stalled') {
          resetStream(call);
          return;
        }
      }
      call.end();
    } finally {
      this.active--;
    }
  }

  private refusal(request: NodeSnapshotRequest__Output): NodeResponse | undefined {
    const refusal = adminRefusal(this.core, request.username);
    if (refusal !== undefined) return refusal;
    if (this.active >= MAX_SNAPSHOT_STREAMS) return wireErrorAnswer('TooManyRequests');
    return undefined;
  }
}
