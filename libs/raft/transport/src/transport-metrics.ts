import type { Metrics } from '@ward/platform/metrics';
import type { TransportHooks } from './hooks';

/**
 * Transport hooks that count into Prometheus metrics (per peer, ids in hex):
 * `raft_peer_sent_messages_total`, `raft_peer_sent_bytes_total`,
 * `raft_peer_dropped_messages_total{reason}`, `raft_peer_reconnects_total`,
 * `raft_peer_unreachable_total`, `raft_peer_received_messages_total`,
 * `raft_peer_received_bytes_total`, `raft_peer_rejected_frames_total`.
 * `next` hooks, if given, run as well.
 */
export function transportMetricsHooks(metrics: Metrics, next: TransportHooks = {}): TransportHooks {
  const sentMessages = metrics.counter({ name: 'raft_peer_sent_messages_total', help: 'Messages handed to a peer stream.', labelNames: ['peer'] });
  const sentBytes = metrics.counter({ name: 'raft_peer_sent_bytes_total', help: 'Frame bytes handed to a peer stream.', labelNames: ['peer'] });
  const dropped = metrics.counter({ name: 'raft_peer_dropped_messages_total', help: 'Messages dropped instead of queued.', labelNames: ['peer', 'reason'] });
  const reconnects = metrics.counter({ name: 'raft_peer_reconnects_total', help: 'Streams reopened after a failure.', labelNames: ['peer'] });
  const unreachable = metrics.counter({ name: 'raft_peer_unreachable_total', help: 'Failed connects or streams.', labelNames: ['peer'] });
  const receivedMessages = metrics.counter({ name: 'raft_peer_received_messages_total', help: 'Messages received from a peer.', labelNames: ['peer'] });
  const receivedBytes = metrics.counter({ name: 'raft_peer_received_bytes_total', help: 'Frame bytes received from a peer.', labelNames: ['peer'] });
  const rejected = metrics.counter({ name: 'raft_peer_rejected_frames_total', help: 'Received frames or streams refused.' });
  const hex = (peer: bigint): string => peer.toString(16);
  return {
    onSent: (peer, messages, bytes) => {
      sentMessages.inc({ peer: hex(peer) }, messages);
      sentBytes.inc({ peer: hex(peer) }, bytes);
      next.onSent?.(peer, messages, bytes);
    },
    onDropped: (peer, messages, reason) => {
      dropped.inc({ peer: hex(peer), reason }, messages);
      next.onDropped?.(peer, messages, reason);
    },
    onReconnect: (peer, attempt, delayMs) => {
      reconnects.inc({ peer: hex(peer) });
      next.onReconnect?.(peer, attempt, delayMs);
    },
    onUnreachable: (peer, error) => {
      unreachable.inc({ peer: hex(peer) });
      next.onUnreachable?.(peer, error);
    },
    onReceived: (peer, messages, bytes) => {
      receivedMessages.inc({ peer: hex(peer) }, messages);
      receivedBytes.inc({ peer: hex(peer) }, bytes);
      next.onReceived?.(peer, messages, bytes);
    },
    onRejected: (reason) => {
      rejected.inc();
      next.onRejected?.(reason);
    },
  };
}
