import type { Clock } from '@ward/shared/clock';
import type { SimpleTokenRecord, SimpleTokenTable } from './simple-token-table';

/**
 * etcd's per-member behaviour over a table, for a process that owns its table alone (a single
 * node, tests): resolving a token slides its TTL at once, and `sweep` expires idle tokens. Time
 * comes from the injected clock. Replicated deployments do not use this: they refresh through
 * TokenActivity batches proposed to Raft.
 */
export class SimpleTokenKeeper {
  constructor(
    private readonly table: SimpleTokenTable,
    private readonly clock: Clock,
  ) {}

  /** The live record for `token` (its TTL now restarted), or undefined. */
  resolve(token: string): SimpleTokenRecord | undefined {
    const nowMs = this.clock.nowMs();
    const record = this.table.lookup(token, nowMs);
    if (record === undefined) return undefined;
    this.table.refresh([token], nowMs);
    return this.table.lookup(token, nowMs);
  }

  /** Expires idle tokens; call about once a second, as etcd's sweeper does. */
  sweep(): number {
    return this.table.expire(this.clock.nowMs());
  }
}
