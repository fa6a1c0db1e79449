import type { ByteString } from './byte-string';
import type { KeyRecord } from './key-record';

// An incremental digest of the key space: the sum (mod 2^32, in two independent lanes) of a hash
// of every retained (key, record) pair, mixed with the revision counters when read. Adding a
// record adds its hash, compaction subtracts the hashes of what it drops, so the digest costs
// O(1) per change and O(1) to read (its first read sums it from the state, O(state) once: see
// StateDigest.deferred),
// and two states holding the same records at the same revisions have the same digest whatever the
// order of their histories' construction.
// Not cryptographic: it detects replica divergence, not tampering.

const LANE_A_SEED = 0x811c9dc5;
const LANE_B_SEED = 0x9747b28c;
const PRIME_A = 0x01000193;
const PRIME_B = 0x5bd1e995;
const TWO_POW_32 = 0x1_0000_0000;

/** Final avalanche (murmur3 fmix32), so that sums of hashes do not cancel structure. */
function fmix(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Two-lane running hash over bytes and numbers. One instance is reused for every record (the
 * store is single-threaded and hashing never re-enters), so hashing allocates nothing.
 */
class LaneHasher {
  a = LANE_A_SEED;
  b = LANE_B_SEED;

  reset(): void {
    this.a = LANE_A_SEED;
    this.b = LANE_B_SEED;
  }

  byte(value: number): void {
    this.a = Math.imul(this.a ^ value, PRIME_A);
    this.b = Math.imul(this.b ^ value, PRIME_B) ^ (this.b >>> 15);
  }

  text(value: ByteString): void {
    let a = this.a;
    let b = this.b;
    for (let i = 0; i < value.length; i++) {
      const byte = value.charCodeAt(i);
      a = Math.imul(a ^ byte, PRIME_A);
      b = Math.imul(b ^ byte, PRIME_B) ^ (b >>> 15);
    }
    this.a = a;
    this.b = b;
    this.number(value.length);
  }

  /** A safe integer (or -1), as its low and high 32-bit halves. */
  number(value: number): void {
    const low = value >>> 0;
    const high = Math.floor(value / TWO_POW_32) >>> 0;
    this.a = Math.imul(this.a ^ low, PRIME_A);
    this.b = Math.imul(this.b ^ high, PRIME_B);
    this.a = Math.imul(this.a ^ high, PRIME_A);
    this.b = Math.imul(this.b ^ low, PRIME_B);
  }

  bigint(value: bigint): void {
    if (value === 0n) {
      this.number(0);
      this.number(0);
      return;
    }
    this.number(Number(BigInt.asUintN(32, value)));
    this.number(Number(BigInt.asUintN(32, value >> 32n)));
  }
}

const recordHasher = new LaneHasher();

/** Hashes one (key, record) pair into `recordHasher`'s lanes (not yet mixed). */
function hashRecord(key: ByteString, record: KeyRecord): void {
  const hasher = recordHasher;
  hasher.reset();
  hasher.text(key);
  hasher.number(record.modRevision);
  hasher.number(record.subRevision);
  if (record.value === null) {
    hasher.byte(0);
  } else {
    hasher.byte(1);
    hasher.number(record.createRevision);
    hasher.number(record.version);
    hasher.bigint(record.lease);
    hasher.text(record.value);
  }
}

/** The two lane hashes of one (key, record) pair. */
export function recordDigest(key: ByteString, record: KeyRecord): [number, number] {
  hashRecord(key, record);
  return [fmix(recordHasher.a), fmix(recordHasher.b)];
}

/**
 * What one retained record counts towards the store's size: its key and value bytes and etcd's
 * per-revision overhead (etcd's quota charges a put `kvOverhead` (256) + key + value bytes).
 */
export const RECORD_OVERHEAD_BYTES = 256;

/**
 * The most a retained record adds to a key-space snapshot beyond its key and value bytes: its
 * flags, revisions, version, lease and value length (at most 43 bytes), and its key's length and
 * record count when it is the key's first (at most 8 more).
 */
export const RECORD_SNAPSHOT_OVERHEAD_BYTES = 64;

export function recordSizeBytes(key: ByteString, record: KeyRecord): number {
  return RECORD_OVERHEAD_BYTES + key.length + (record.value === null ? 0 : record.value.length);
}

/**
 * The running sums, and the size of the records they cover (`retainedBytes`: the measure the
 * backend quota compares; compaction lowers it at once, no defragmentation needed).
 *
 * A digest made by `deferred()` counts sizes only. Key spaces start that way, new or restored: a
 * member never reads the sums (tests and tools compare replicas with them), and hashing every key
 * and value of every put was a twentieth of a member's CPU under a bulk load (and two fifths of a
 * large snapshot's decode). They are summed from the state the first time they are needed
 * (`sumLanes`), and kept in step from then on.
 */
export class StateDigest {
  private laneA = 0;
  private laneB = 0;
  private bytes = 0;
  private records = 0;
  private lanesKnown = true;

  /** A digest whose sums are not kept until `sumLanes` is called; sizes are. */
  static deferred(): StateDigest {
    const digest = new StateDigest();
    digest.lanesKnown = false;
    return digest;
  }

  /** The summed `recordSizeBytes` of every retained record. */
  get retainedBytes(): number {
    return this.bytes;
  }

  /** At least the bytes a snapshot of the key space takes (its records with RECORD_SNAPSHOT_OVERHEAD_BYTES each). */
  get snapshotBoundBytes(): number {
    return this.bytes - this.records * (RECORD_OVERHEAD_BYTES - RECORD_SNAPSHOT_OVERHEAD_BYTES);
  }

  /** False while the sums are deferred: `sumLanes` must run before `hex`. */
  get summed(): boolean {
    return this.lanesKnown;
  }

  /**
   * Sums the lanes over every retained record, which `forEachRecord` hands to its callback once
   * each (sizes are already counted). Does nothing when they are already known.
   */
  sumLanes(forEachRecord: (visit: (key: ByteString, record: KeyRecord) => void) => void): void {
    if (this.lanesKnown) return;
    this.laneA = 0;
    this.laneB = 0;
    forEachRecord((key, record) => this.sum(key, record, 1));
    this.lanesKnown = true;
  }

  add(key: ByteString, record: KeyRecord): void {
    this.bytes += recordSizeBytes(key, record);
    this.records += 1;
    if (this.lanesKnown) this.sum(key, record, 1);
  }

  remove(key: ByteString, record: KeyRecord): void {
    this.bytes -= recordSizeBytes(key, record);
    this.records -= 1;
    if (this.lanesKnown) this.sum(key, record, -1);
  }

  /** Adds (`sign` 1) or subtracts (-1) one record's hashes to the lanes. */
  private sum(key: ByteString, record: KeyRecord, sign: 1 | -1): void {
    hashRecord(key, record);
    this.laneA = (this.laneA + sign * fmix(recordHasher.a)) >>> 0;
    this.laneB = (this.laneB + sign * fmix(recordHasher.b)) >>> 0;
  }

  /** Subtracts every record of a chain from `first` down (records compaction drops). */
  removeChain(key: ByteString, first: KeyRecord | null): void {
    for (let record = first; record !== null; record = record.prev) this.remove(key, record);
  }

  /** 16 hex digits: the sums mixed with the revision counters. */
  hex(currentRevision: number, compactRevision: number, floorRevision: number): string {
    if (!this.lanesKnown) throw new Error('StateDigest.hex: the sums are deferred (call sumLanes first)');
    const hasher = new LaneHasher();
    hasher.number(this.laneA);
    hasher.number(this.laneB);
    hasher.number(currentRevision);
    hasher.number(compactRevision + 1);
    hasher.number(floorRevision);
    return fmix(hasher.a).toString(16).padStart(8, '0') + fmix(hasher.b).toString(16).padStart(8, '0');
  }
}
