// Unique request ids for proposals (etcd's idutil.Generator shape): the top 16 bits are the low
// 16 bits of the member id, the low 48 bits a counter seeded from the wall clock at boot (ms << 8),
// so ids stay unique across members and across restarts of one member.

const LOW_48_BITS = (1n << 48n) - 1n;

export class RequestIdGenerator {
  private readonly prefix: bigint;
  private suffix: bigint;

  constructor(memberId: bigint, nowMs: number) {
    this.prefix = (memberId & 0xffffn) << 48n;
    this.suffix = (BigInt(Math.floor(nowMs)) << 8n) & LOW_48_BITS;
  }

  next(): bigint {
    this.suffix = (this.suffix + 1n) & LOW_48_BITS;
    return this.prefix | this.suffix;
  }
}
