// etcd's Maintenance.Snapshot at the leader: the admin check (as Maintain), then a backup file
// (backup/backup-file.ts) of the state machine at this member's applied index, streamed as
// etcdserverpb.SnapshotResponse messages of at most 32 KiB of blob (etcd's chunk size; written by
// snapshot-answer.ts into buffers the stream reuses), the SHA-256
// computed on the way, after an empty first answer that says the stream was accepted. The state
// is never held whole: it is sized first (the file's header holds its length), then encoded a
// turn at a time into a few reused 1 MiB buffers (snapshot-turns.ts), each turn once the stream
// took the previous one's bytes (backpressure), so a state of any size costs a few MiB and at most
// SNAPSHOT_TURN_MS of the event loop at a time. A compaction applied while the state is sized
// spoils it and it is taken again (up to MAX_SNAPSHOT_ATTEMPTS); one applied after bytes went out
// ends the stream with `etcdserver: request timed out` (the client discards a partial file, as
// etcdctl does). At most MAX_SNAPSHOT_STREAMS streams at a time per member; beyond, `etcdserver:
// too many requests`. A reader that takes nothing for `snapshotStallTimeoutMs` loses its stream,
// which frees the slot and the buffers.
import { constants as http2Constants } from 'node:http2';
import type { ServerWritableStream } from '@grpc/grpc-js';
import { encodeEtcdMessage, responseHeaderToProto } from '@ward/etcd/api-mapping';
import type { NodeResponse, NodeSnapshotRequest__Output } from '@ward/etcd/proto';
import { backupFileBytes, backupFileStream, type BackupInfo } from '../backup/backup-file';
import type { NodeSnapshotTask } from '../state-machine';
import { PooledSnapshot, SnapshotGivenUp } from '../snapshot-turns';
import { responseAnswer, wireErrorAnswer } from './answers';
import { adminRefusal } from './maintain';
import { responseContext, type NodeCore } from './node-core';
import { SnapshotAnswers, type EncodedSnapshotAnswer } from './snapshot-answer';

const SNAPSHOT_CHUNK_BYTES = 32 * 1024;
/** The first answer of an accepted stream: no bytes (see serve). */
const STREAM_ACCEPTED = new Uint8Array(0);
const MAX_SNAPSHOT_STREAMS = 2;
/** Times a snapshot spoilt by a compaction is taken again before the call fails (request timed out). */
const MAX_SNAPSHOT_ATTEMPTS = 3;
/** Bytes written to a reader that keeps up before other work is let in. */
const SNAPSHOT_BYTES_PER_TURN = 1024 * 1024;

/** Its chunks are written encoded (snapshot-answer.ts), its other answers as NodeResponse objects. */
type SnapshotCall = ServerWritableStream<NodeSnapshotRequest__Output, NodeResponse | EncodedSnapshotAnswer>;

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
      // Accepted: an empty answer at once, before the sizing pass (seconds at millions of keys), so
      // the gateway's request deadline, which bounds the wait for a first answer, is not spent on it.
      // The gateway relays no empty answer; a failure from here on ends the stream instead.
      call.write(responseAnswer(STREAM_ACCEPTED));
      const sized = await this.sizeState(call);
      if (sized === 'cancelled') return;
      if (sized === 'stale') {
        call.write(wireErrorAnswer('Timeout'));
        call.end();
        return;
      }
      const { info, snapshot } = sized;
      const stateBytes = snapshot.task.sizeBytes!;
      const fileBytes = backupFileBytes(stateBytes);
      const answers = new SnapshotAnswers(encodeEtcdMessage('etcdserverpb.ResponseHeader', responseHeaderToProto(responseContext(core), info.revision)), SNAPSHOT_CHUNK_BYTES);
      const state = snapshot.pieces(() => call.cancelled);
      let sent = 0;
      let sentSinceTurn = 0;
      try {
        for await (const blob of backupFileStream(info, stateBytes, state, SNAPSHOT_CHUNK_BYTES)) {
          if (call.cancelled) return;
          sent += blob.length;
          // Encoding copies the blob: its buffer may be reused once the next is asked for.
          if (call.write(answers.encode(fileBytes - sent, blob))) {
            // A reader that keeps up never makes the loop wait: let other work in now and then.
            sentSinceTurn += blob.length;
            if (sentSinceTurn >= SNAPSHOT_BYTES_PER_TURN) {
              sentSinceTurn = 0;
              await new Promise((resolve) => setImmediate(resolve));
            }
            continue;
          }
          sentSinceTurn = 0;
          const outcome = await drained(call, core.config.snapshotStallTimeoutMs);
          if (outcome === 'closed') return;
          if (outcome === 'stalled') {
            resetStream(call);
            return;
          }
        }
      } catch (error) {
        if (!(error instanceof SnapshotGivenUp)) throw error;
        if (error.reason === 'dropped' || call.cancelled) return;
        // A compaction cut records still to be sent: the bytes out cannot be taken back.
        call.write(wireErrorAnswer('Timeout'));
      }
      call.end();
    } finally {
      this.active--;
    }
  }

  /**
   * A streamed snapshot of the state machine at this member's applied index, sized in turns
   * between which the member keeps serving; its index, term and revision are those of the same
   * moment. A compaction applied while it is sized spoils it: it is taken again, up to
   * MAX_SNAPSHOT_ATTEMPTS times.
   */
  private async sizeState(call: SnapshotCall): Promise<{ info: BackupInfo; snapshot: PooledSnapshot<NodeSnapshotTask> } | 'stale' | 'cancelled'> {
    const core = this.core;
    for (let attempt = 0; attempt < MAX_SNAPSHOT_ATTEMPTS; attempt++) {
      const stateMachine = core.stateMachine;
      const info: BackupInfo = {
        index: stateMachine.appliedIndex,
        term: core.driver.currentTerm,
        revision: stateMachine.applier.keySpaceView.currentRevision,
        clusterId: core.config.clusterId,
      };
      const snapshot = new PooledSnapshot((stream) => stateMachine.snapshotTask(stream));
      const result = await snapshot.size(() => call.cancelled);
      if (result === 'done') return { info, snapshot };
      if (result === 'dropped') return 'cancelled';
    }
    return 'stale';
  }

  private refusal(request: NodeSnapshotRequest__Output): NodeResponse | undefined {
    const refusal = adminRefusal(this.core, request.username);
    if (refusal !== undefined) return refusal;
    if (this.active >= MAX_SNAPSHOT_STREAMS) return wireErrorAnswer('TooManyRequests');
    return undefined;
  }
}
