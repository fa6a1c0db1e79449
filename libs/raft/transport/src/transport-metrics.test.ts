import { describe, expect, it } from 'vitest';
import { createMetrics } from '@ward/platform/metrics';
import { transportMetricsHooks } from './transport-metrics';

describe('transportMetricsHooks', () => {
  it('counts sent, dropped, reconnects and received per peer, and calls the next hooks', async () => {
    const metrics = createMetrics({ prefix: 'ward_', collectProcessMetrics: false });
    const seen: string[] = [];
    const hooks = transportMetricsHooks(metrics, { onDropped: (_p, n, reason) => seen.push(`${reason}:${n}`) });
    hooks.onSent!(0xabn, 3, 300);
    hooks.onSent!(0xabn, 2, 100);
    hooks.onDropped!(0xabn, 4, 'queue-full');
    hooks.onReconnect!(0xabn, 1, 50);
    hooks.onReceived!(0xcdn, 7, 700);
    hooks.onRejected!('bad frame');
    const text = await metrics.render();
    expect(text).toContain('ward_raft_peer_sent_messages_total{peer="ab"} 5');
    expect(text).toContain('ward_raft_peer_sent_bytes_total{peer="ab"} 400');
    expect(text).toContain('ward_raft_peer_dropped_messages_total{peer="ab",reason="queue-full"} 4');
    expect(text).toContain('ward_raft_peer_reconnects_total{peer="ab"} 1');
    expect(text).toContain('ward_raft_peer_received_messages_total{peer="cd"} 7');
    expect(text).toContain('ward_raft_peer_rejected_frames_total 1');
    expect(seen).toEqual(['queue-full:4']);
  });
});
