import { createMetrics, watchEventLoopStalls, type Metrics } from '@ward/platform/metrics';

export interface GatewayMetrics {
  readonly registry: Metrics;
  /** Sets the number of open client Watch streams. */
  setWatchStreams(count: number): void;
  /** Reports the read replica's state at every scrape. */
  trackReplica(read: () => ReplicaGauges): void;
  /** Stops the event-loop stall probe (when process metrics are collected). */
  close(): void;
}

/** What the read replica reports. */
export interface ReplicaGauges {
  readonly synced: boolean;
  readonly appliedIndex: number;
  readonly resyncs: number;
  /** Feeds that went on from the replica's state (no snapshot). */
  readonly resumes: number;
  /** Feeds moved from another member to the leader. */
  readonly moves: number;
  /** Reads answered from the replica. */
  readonly local: number;
  /** Reads the replica could not answer in time, sent to a member. */
  readonly fallback: number;
}

/** The gateway's Prometheus registry (`ward_gateway_*`; gRPC call counts come from the server). */
export function createGatewayMetrics(collectProcessMetrics: boolean): GatewayMetrics {
  const registry = createMetrics({ prefix: 'ward_gateway_', collectProcessMetrics });
  // With the process metrics: the longest event-loop stall (event_loop_longest_stall_seconds).
  const stalls = collectProcessMetrics ? watchEventLoopStalls(registry) : undefined;
  const watchStreams = registry.gauge({ name: 'watch_streams', help: 'client Watch streams open' });
  const trackReplica = (read: () => ReplicaGauges): void => {
    registry.gauge({ name: 'replica_synced', help: '1 while the read replica holds a state it serves reads from', collect: (g) => g.set(read().synced ? 1 : 0) });
    registry.gauge({ name: 'replica_applied_index', help: 'raft index the read replica has applied', collect: (g) => g.set(read().appliedIndex) });
    registry.gauge({ name: 'replica_resyncs', help: "times the read replica's feed ended and it followed again (since start)", collect: (g) => g.set(read().resyncs) });
    registry.gauge({ name: 'replica_moves', help: "times the read replica's feed moved from another member to the leader (since start)", collect: (g) => g.set(read().moves) });
    registry.gauge({ name: 'replica_resumes', help: "times a new feed went on from the read replica's state, without a snapshot (since start)", collect: (g) => g.set(read().resumes) });
    registry.gauge({
      name: 'replica_reads',
      help: 'reads since start, by where they were answered: replica, or members (the replica could not answer in time)',
      labelNames: ['served'],
      collect: (g) => {
        const state = read();
        g.set({ served: 'replica' }, state.local);
        g.set({ served: 'members' }, state.fallback);
      },
    });
  };
  return { registry, setWatchStreams: (count) => watchStreams.set(count), trackReplica, close: () => stalls?.disable() };
}
