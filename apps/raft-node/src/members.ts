// The static member list of a cluster: who the members are, where their peers and APIs listen,
// and the ids derived from it.
import { createHash } from 'node:crypto';

/** A `host:port` pair. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** One member of the cluster as configured. */
export interface MemberSpec {
  /** etcd-style uint64 member id, non-zero. */
  readonly id: bigint;
  readonly name: string;
  /** Where the other members reach this one's peer (raft) service. */
  readonly peerAddress: string;
  /** Where gateways reach this one's internal API. */
  readonly apiAddress: string;
}

const MEMBER_ID = /^(0x[0-9a-fA-F]{1,16}|[0-9]{1,20})$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const HOST_PORT = /^([A-Za-z0-9.-]{1,253}|\[[0-9a-fA-F:]{2,39}\]):([0-9]{1,5})$/;
const UINT64_MAX = 2n ** 64n - 1n;

/** Most members a cluster may list (etcd recommends 3 or 5; 7 is its practical maximum). */
export const MAX_MEMBERS = 9;

/** A member id from `0x`-hex or decimal text; throws a message on anything else. */
export function parseMemberId(text: string): bigint {
  if (!MEMBER_ID.test(text)) throw new Error(`member id ${JSON.stringify(text)} must be decimal or 0x-hex`);
  const id = BigInt(text);
  if (id === 0n || id > UINT64_MAX) throw new Error(`member id ${text} must be in [1, 2^64 - 1]`);
  return id;
}

/** `host:port`, port 0..65535. */
export function parseHostPort(text: string): HostPort {
  const match = HOST_PORT.exec(text);
  if (match === null) throw new Error(`address ${JSON.stringify(text)} must be host:port`);
  const port = Number(match[2]);
  if (port > 65_535) throw new Error(`address ${text}: port must be at most 65535`);
  const host = match[1]!.startsWith('[') ? match[1]!.slice(1, -1) : match[1]!;
  return { host, port };
}

/** One `id=name=peerHost:peerPort=apiHost:apiPort` item. */
export function parseMember(item: string): MemberSpec {
  const parts = item.split('=');
  if (parts.length !== 4) throw new Error(`member ${JSON.stringify(item)} must be id=name=peerHost:port=apiHost:port`);
  const [id, name, peerAddress, apiAddress] = parts as [string, string, string, string];
  if (!NAME.test(name)) throw new Error(`member name ${JSON.stringify(name)} must be 1-63 letters, digits, '.', '_' or '-'`);
  parseHostPort(peerAddress);
  parseHostPort(apiAddress);
  return { id: parseMemberId(id), name, peerAddress, apiAddress };
}

/** Parses and checks the whole list: unique ids, names and addresses; at most MAX_MEMBERS. */
export function parseMembers(items: readonly string[]): MemberSpec[] {
  if (items.length === 0) throw new Error('the member list is empty');
  if (items.length > MAX_MEMBERS) throw new Error(`at most ${MAX_MEMBERS} members, got ${items.length}`);
  const members = items.map(parseMember);
  const unique = (what: string, values: readonly string[]): void => {
    const seen = new Set<string>();
    for (const value of values) {
      if (seen.has(value)) throw new Error(`duplicate member ${what} ${value}`);
      seen.add(value);
    }
  };
  unique('id', members.map((m) => m.id.toString()));
  unique('name', members.map((m) => m.name));
  unique('peer address', members.map((m) => m.peerAddress));
  unique('api address', members.map((m) => m.apiAddress));
  return members;
}

/**
 * The cluster id, as etcd derives it from the initial members: the first 8 bytes (big-endian) of
 * SHA-1 over the sorted member ids, each as 8 big-endian bytes. Addresses do not enter it, so
 * members may reach each other through different addresses (proxies) and still agree.
 */
export function clusterIdOf(memberIds: readonly bigint[]): bigint {
  const sorted = [...memberIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const bytes = Buffer.alloc(8 * sorted.length);
  sorted.forEach((id, i) => bytes.writeBigUInt64BE(id, 8 * i));
  return createHash('sha1').update(bytes).digest().readBigUInt64BE(0);
}

/** Member ids print as etcd prints them: lower-case hex without leading zeros. */
export function formatMemberId(id: bigint): string {
  return id.toString(16);
}
