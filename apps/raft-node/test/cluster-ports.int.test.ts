// The local cluster's start when a picked port is taken before a member binds it: the start is
// undone and tried again on fresh ports; other failures are not retried.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalCluster, MemberProcess, buildRaftNodeBundle, freePorts, occupiedPort, putRequest } from '@ward/testing/cluster';

const squatter = await occupiedPort();
const taken = squatter.port;
afterAll(() => squatter.release());

/** Whether something on 127.0.0.1 accepts a connection on `port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('a member that cannot bind its API port', () => {
  it('exits with code 1, saying why, and lets go of the peer port it had bound', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ward-ports-'));
    try {
      const [peer, http] = await freePorts(2);
      const member = MemberProcess.spawn({
        entry: buildRaftNodeBundle(),
        name: 'node-1',
        logFile: join(dir, 'node-1.log'),
        httpPort: http!,
        env: {
          RAFT_NODE_MEMBER_ID: '1',
          RAFT_NODE_MEMBERS: `1=node-1=127.0.0.1:${peer}=127.0.0.1:${taken}`,
          RAFT_NODE_DATA_DIR: join(dir, 'node-1'),
          RAFT_NODE_HTTP_ADDRESS: `127.0.0.1:${http}`,
        },
      });
      const exit = await Promise.race([member.exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 15_000))]);
      if (exit === 'running') await member.kill();
      expect(exit).toEqual({ code: 1, signal: null });
      expect(member.stderr).toContain(`cannot start`);
      expect(member.stderr).toContain(`EADDRINUSE`);
      expect(await accepts(peer!)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('LocalCluster.start', () => {
  it('starts again on fresh ports when a member finds its port in use', async () => {
    const picks: number[][] = [];
    const pickPorts = async (count: number): Promise<number[]> => {
      const ports = await freePorts(count);
      if (picks.length === 0) ports[0] = taken; // member 1's API port is someone else's
      picks.push(ports);
      return ports;
    };
    const cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), size: 1, pickPorts });
    try {
      expect(picks).toHaveLength(2);
      expect(cluster.members[0]!.apiAddress).toBe(`127.0.0.1:${picks[1]![0]}`);
      const leader = await cluster.waitForLeader(20_000);
      expect((await cluster.client(leader).propose(putRequest('k', 'v'), 5000)).kind).toBe('ok');
    } finally {
      await cluster.stop();
    }
  }, 60_000);

  it('gives up after three starts that all find a port in use, leaving no member running', async () => {
    const picks: number[][] = [];
    const pickPorts = async (count: number): Promise<number[]> => {
      const ports = await freePorts(count);
      ports[0] = taken;
      picks.push(ports);
      return ports;
    };
    await expect(LocalCluster.start({ entry: buildRaftNodeBundle(), size: 2, pickPorts })).rejects.toThrow(/EADDRINUSE/);
    expect(picks).toHaveLength(3);
    // member 2 of each start could bind all three of its ports; none of them is served now
    for (const ports of picks) for (const port of ports.slice(3)) expect(await accepts(port)).toBe(false);
  }, 60_000);

  it('does not retry a failure that is not about a port', async () => {
    let calls = 0;
    const pickPorts = async (count: number): Promise<number[]> => ((calls += 1), freePorts(count));
    await expect(LocalCluster.start({ entry: buildRaftNodeBundle(), size: 1, pickPorts, env: { RAFT_NODE_MEMBER_ID: 'not-a-number' } })).rejects.toThrow(/exited/);
    expect(calls).toBe(1);
  }, 60_000);
});
