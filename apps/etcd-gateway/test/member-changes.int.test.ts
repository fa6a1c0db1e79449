// etcdctl's member commands against ward (3 raft-nodes + gateway) and against real etcd 3.4.23
// (3 members): the same sequence of `member add --learner`, `member promote`, `member update`,
// `member remove` and `member add` of a voter, with etcd's refusals (too many learners, peer URL
// exists, learner not in sync, not a learner, member not found, unhealthy cluster under the
// strict reconfiguration check), gives the same transcript once member ids, cluster ids and
// ports are normalised. Membership changes are admin-only: a non-root user is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '@ward/testing/cluster';
import { runEtcdctl, startEtcdCluster, type EtcdCluster } from '@ward/testing/etcd-harness';
import { setUpAuth, startWardCluster, type WardCluster } from './support/ward-cluster';

let ward: WardCluster;
let etcd: EtcdCluster;

beforeAll(async () => {
  [ward, etcd] = await Promise.all([startWardCluster(), startEtcdCluster({ members: 3 })]);
}, 120_000);
afterAll(async () => {
  await Promise.all([ward?.stop(), etcd?.stop()]);
});

interface Target {
  readonly endpoint: string;
  readonly label: string;
}

interface ListedMember {
  ID: string | number;
  name?: string;
  peerURLs: string[];
  isLearner?: boolean;
}

async function ctl(target: Target, args: string[], user?: { name: string; password: string }): Promise<{ code: number | null; out: string; err: string }> {
  const result = await runEtcdctl({ endpoints: [target.endpoint], args, timeoutMs: 30_000, ...(user === undefined ? {} : { user }) });
  return { code: result.exitCode, out: result.stdout, err: result.stderr };
}

async function list(target: Target): Promise<ListedMember[]> {
  const result = await ctl(target, ['member', 'list', '-w', 'json']);
  // etcdctl prints ids as JSON numbers beyond 2^53: read them as text
  return (JSON.parse(result.out.replace(/"ID":(\d+)/g, '"ID":"$1"')) as { members: ListedMember[] }).members;
}

const hex = (id: string | number): string => BigInt(id).toString(16);

/** The sequence, on one target; returns its transcript with ids and ports normalised. */
async function transcript(target: Target): Promise<string[]> {
  const lines: string[] = [];
  const ids = new Map<string, string>();
  const norm = (text: string): string =>
    text
      .replace(/\s+/g, ' ')
      .replace(/127\.0\.0\.1:\d+/g, 'LOCAL:PORT')
      .replace(/\b[0-9a-f]{1,16}\b/g, (id) => {
        if (!ids.has(id) && id.length < 10) return id;
        if (!ids.has(id)) ids.set(id, `<id${ids.size + 1}>`);
        return ids.get(id)!;
      })
      .trim();
  const step = async (what: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> => {
    const result = await ctl(target, args);
    const first = result.code === 0 ? result.out.split('\n')[0]! : result.err.split('\n').filter((l) => l.startsWith('Error'))[0] ?? result.err;
    lines.push(`${what}: exit ${result.code}: ${norm(first)}`);
    return result;
  };
  const [p1, p2, p3] = await freePorts(3);
  const before = await list(target);
  const voter = before[0]!;
  const other = before[1]!;
  ids.set(hex(voter.ID), '<voter>');
  ids.set(hex(other.ID), '<other>');

  const added = await step('add learner', ['member', 'add', 'newbie', `--peer-urls=http://127.0.0.1:${p1}`, '--learner']);
  const learnerId = /Member\s+([0-9a-f]+) added/.exec(added.out)?.[1] ?? '0';
  ids.set(learnerId, '<learner>');
  lines.push(`listed after add: ${JSON.stringify((await list(target)).map((m) => [(m.name ?? '') === '' ? 'unstarted' : 'started', m.isLearner === true]).sort())}`);
  await step('second learner', ['member', 'add', 'again', `--peer-urls=http://127.0.0.1:${p2}`, '--learner']);
  await step('existing peer URL', ['member', 'add', 'dup', `--peer-urls=${voter.peerURLs[0]}`]);
  await step('promote unstarted learner', ['member', 'promote', learnerId]);
  await step('promote a voter', ['member', 'promote', hex(voter.ID)]);
  const early = await step('voter while the learner is down', ['member', 'add', 'early', `--peer-urls=http://127.0.0.1:${p3}`]);
  const earlyId = /Member\s+([0-9a-f]+) added/.exec(early.out)?.[1] ?? '0';
  await step('remove unknown', ['member', 'remove', '1234abcd5678']);
  await step('update unknown', ['member', 'update', '1234abcd5678', `--peer-urls=http://127.0.0.1:${p2}`]);
  await step('update to a taken URL', ['member', 'update', hex(voter.ID), `--peer-urls=${other.peerURLs[0]}`]);
  await step('update to its own URL', ['member', 'update', hex(voter.ID), `--peer-urls=${voter.peerURLs[0]}`]);
  await step('bad URL', ['member', 'add', 'bad', '--peer-urls=ftp://nowhere']);
  await step('remove learner', ['member', 'remove', learnerId]);
  await step('remove it again', ['member', 'remove', learnerId]);
  await step('add a voter while a voter is down', ['member', 'add', 'voter', `--peer-urls=http://127.0.0.1:${p2}`]);
  await step('remove the voter that never started', ['member', 'remove', earlyId]);
  await step('add a voter again', ['member', 'add', 'voter', `--peer-urls=http://127.0.0.1:${p2}`]);
  lines.push(`listed before cleanup: ${JSON.stringify((await list(target)).map((m) => [(m.name ?? '') === '' ? 'unstarted' : 'started', m.isLearner === true]).sort())}`);
  const unstarted = (await list(target)).filter((m) => (m.name ?? '') === '');
  for (const m of unstarted) await step('remove an unstarted voter', ['member', 'remove', hex(m.ID)]);
  lines.push(`listed at the end: ${(await list(target)).length} members`);
  return lines;
}

describe('etcdctl member commands, ward against etcd 3.4.23', () => {
  it('give the same transcript, refusals included', async () => {
    const wardTarget = { endpoint: ward.gateways[0]!.grpcAddress, label: 'ward' };
    const etcdTarget = { endpoint: etcd.clientEndpoint, label: 'etcd' };
    // etcd counts a member as active once connected for its health interval (5 s); both
    // clusters are older than that here
    await new Promise((r) => setTimeout(r, 6000));
    const expected = await transcript(etcdTarget);
    const actual = await transcript(wardTarget);
    console.log(expected.join('\n'));
    expect(actual).toEqual(expected);
  }, 180_000);

  it('are admin-only once auth is on (etcd 3.7): a plain user gets permission denied, root succeeds', async () => {
    await setUpAuth(ward.client(), { rootPassword: 'root-pw', user: 'alice', password: 'alice-pw', prefix: 'a/' });
    const target = { endpoint: ward.gateways[0]!.grpcAddress, label: 'ward' };
    const [port] = await freePorts(1);
    const denied = await ctl(target, ['member', 'add', 'x', `--peer-urls=http://127.0.0.1:${port}`, '--learner'], { name: 'alice', password: 'alice-pw' });
    expect(denied.err).toMatch(/Error: etcdserver: permission denied/);
    const added = await ctl(target, ['member', 'add', 'x', `--peer-urls=http://127.0.0.1:${port}`, '--learner'], { name: 'root', password: 'root-pw' });
    expect(added.out).toMatch(/^Member\s+[0-9a-f]+ added to cluster\s+[0-9a-f]+/);
    const id = /Member\s+([0-9a-f]+) added/.exec(added.out)![1]!;
    expect((await ctl(target, ['member', 'remove', id], { name: 'alice', password: 'alice-pw' })).err).toMatch(/permission denied/);
    expect((await ctl(target, ['member', 'remove', id], { name: 'root', password: 'root-pw' })).out).toMatch(/removed from cluster/);
  }, 120_000);
});
