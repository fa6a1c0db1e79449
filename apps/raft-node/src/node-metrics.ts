// The member's own Prometheus metrics (the WAL and the peer transport add theirs through their
// hooks): proposals, reads, applied / commit index, leadership, snapshots, watch streams.
import { LATENCY_BUCKETS_SECONDS, type Metrics } from '@ward/platform/metrics';

export type ProposalOutcomeLabel = 'applied' | 'refused' | 'timeout' | 'not_leader' | 'dropped' | 'too_many' | 'stopped';
export type ReadOutcomeLabel = 'ok' | 'refused' | 'timeout' | 'too_many';

export interface NodeMetrics {
  proposal(outcome: ProposalOutcomeLabel, seconds: number): void;
  read(kind: 'linearizable' | 'serializable', outcome: ReadOutcomeLabel, seconds: number): void;
  leaderChange(isLeader: boolean, hasLeader: boolean, term: number): void;
  progress(applied: number, commit: number): void;
  snapshot(bytes: number, seconds: number): void;
  watch(streams: number, watchers: number): void;
  undecodableEntry(): void;
  /** The store's size as the backend quota measures it, and the quota (0: none). */
  store(retainedBytes: number, quotaBytes: number | undefined): void;
}

export function createNodeMetrics(metrics: Metrics): NodeMetrics {
  const proposals = metrics.counter({ name: 'proposals_total', help: 'Proposals by outcome.', labelNames: ['outcome'] });
  const proposalSeconds = metrics.histogram({ name: 'proposal_duration_seconds', help: 'Propose until applied (or refused).', buckets: LATENCY_BUCKETS_SECONDS });
  const reads = metrics.counter({ name: 'reads_total', help: 'Reads by kind and outcome.', labelNames: ['kind', 'outcome'] });
  const readSeconds = metrics.histogram({ name: 'read_duration_seconds', help: 'Read latency by kind.', labelNames: ['kind'], buckets: LATENCY_BUCKETS_SECONDS });
  const leaderChanges = metrics.counter({ name: 'leader_changes_total', help: 'Leader (or term) changes seen by this member.' });
  const isLeader = metrics.gauge({ name: 'is_leader', help: '1 while this member leads.' });
  const hasLeader = metrics.gauge({ name: 'has_leader', help: '1 while a leader is known.' });
  const term = metrics.gauge({ name: 'raft_term', help: 'Current raft term.' });
  const applied = metrics.gauge({ name: 'applied_index', help: 'Last log index applied.' });
  const commit = metrics.gauge({ name: 'commit_index', help: 'Last log index known committed.' });
  const snapshots = metrics.counter({ name: 'snapshots_total', help: 'Local snapshots written.' });
  const snapshotSeconds = metrics.histogram({ name: 'snapshot_duration_seconds', help: 'Time to write a local snapshot.', buckets: LATENCY_BUCKETS_SECONDS });
  const snapshotBytes = metrics.gauge({ name: 'snapshot_bytes', help: 'Size of the last local snapshot.' });
  const watchStreams = metrics.gauge({ name: 'watch_streams', help: 'Open Watch streams.' });
  const watchers = metrics.gauge({ name: 'watchers', help: 'Watchers over all streams.' });
  const undecodable = metrics.counter({ name: 'undecodable_entries_total', help: 'Committed entries that did not decode (skipped).' });
  const retained = metrics.gauge({ name: 'store_retained_bytes', help: 'Size of the retained records as the backend quota counts them (key + value + 256 per version).' });
  const quota = metrics.gauge({ name: 'quota_backend_bytes', help: 'The backend quota in force (0: none).' });
  return {
    proposal(outcome, seconds) {
      proposals.inc({ outcome });
      proposalSeconds.observe(seconds);
    },
    read(kind, outcome, seconds) {
      reads.inc({ kind, outcome });
      readSeconds.observe({ kind }, seconds);
    },
    leaderChange(leader, known, currentTerm) {
      leaderChanges.inc();
      isLeader.set(leader ? 1 : 0);
      hasLeader.set(known ? 1 : 0);
      term.set(currentTerm);
    },
    progress(appliedIndex, commitIndex) {
      applied.set(appliedIndex);
      commit.set(commitIndex);
    },
    snapshot(bytes, seconds) {
      snapshots.inc();
      snapshotSeconds.observe(seconds);
      snapshotBytes.set(bytes);
    },
    watch(streams, count) {
      watchStreams.set(streams);
      watchers.set(count);
    },
    undecodableEntry() {
      undecodable.inc();
    },
    store(retainedBytes, quotaBytes) {
      retained.set(retainedBytes);
      quota.set(quotaBytes ?? 0);
    },
  };
}
