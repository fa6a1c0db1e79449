// A local cluster of real raft-node processes on 127.0.0.1: free ports, a temp data dir per
// member, optional fault-injecting proxies on every directed peer link, and process control
// (kill -9, restart, SIGSTOP / SIGCONT).
import { mkdtemp, rm } from 'node:fs/promises';
import type { ChannelCredentials } from '@grpc/grpc-js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './free-port';
import { MemberProcess, type MemberProcessSpec } from './member-process';
import { NodeApiClient } from './node-client';

export interface LocalClusterOptions<P extends LinkProxy = LinkProxy> {
  /** Members (default 3). */
  readonly size?: number;
  /** Where member data dirs go; a fresh temp dir when omitted (removed by stop()). */
  readonly dataRoot?: string;
  /** Extra RAFT_NODE_* settings for every member. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Put a proxy on every directed peer link (member i dials member j through proxy i->j), made
   * by this factory (tests pass @ward/testing/net-proxy's startNetProxy).
   */
  readonly proxy?: (target: { targetHost: string; targetPort: number }) => Promise<P>;
  /** Member ids (default 1..size). */
  readonly memberIds?: readonly bigint[];
  /** The raft-node entry: a bundle to run with `node` (default dist/apps/raft-node/main.js). */
  readonly entry: string;
  /** How the cluster's API clients reach the members (TLS with a client certificate); default plaintext. */
  readonly clientCredentials?: ChannelCredentials;
  /** Where ports come from (default freePorts); tests of the retry hand out a taken one. */
  readonly pickPorts?: (count: number) => Promise<number[]>;
  /**
   * Runs once ports and data dirs are chosen, before any member starts: e.g. writes the data
   * dirs with `raft-node snapshot-restore`. `members` is each member's RAFT_NODE_MEMBERS value.
   * Runs again, on fresh ports and emptied data dirs, when a start is retried.
   */
  readonly prepare?: (members: ReadonlyArray<{ readonly id: bigint; readonly dataDir: string; readonly membersEnv: string }>) => Promise<void>;
}

/** Where a member about to join will listen. */
export interface PlannedMember {
  readonly name: string;
  readonly apiAddress: string;
  /** Where its peer service listens. */
  readonly peerPort: number;
  /**
   * The peer URL to give MemberAdd: where the other members will reach it (the listening port, or
   * with proxies its inbound proxy, since every member dials the one replicated address).
   */
  readonly peerUrl: string;
  readonly httpPort: number;
  readonly dataDir: string;
  readonly logFile: string;
}

/** What the cluster needs of a link proxy: its listening port and a way to close it. */
export interface LinkProxy {
  readonly port: number;
  close(): Promise<void>;
}

export interface ClusterMember {
  readonly id: bigint;
  readonly name: string;
  readonly apiAddress: string;
  readonly peerPort: number;
  readonly httpPort: number;
  readonly dataDir: string;
  /** stdout and stderr of every run of the member, appended. */
  readonly logFile: string;
  process: MemberProcess | undefined;
}

/** Starts of a whole cluster tried before giving up when a picked port was taken meanwhile. */
const START_ATTEMPTS = 3;

/** A member could not bind a port picked for it: another process took it after it was picked. */
class AddressInUseError extends Error {}

export class LocalCluster<P extends LinkProxy = LinkProxy> {
  private readonly clients = new Map<bigint, NodeApiClient>();
  /** A joined member's inbound proxy (what its replicated peer URL names), by member id. */
  private readonly inbound = new Map<bigint, P>();
  /** Inbound proxies of planned members not joined yet, by planned name. */
  private readonly plannedInbound = new Map<string, P>();

  private constructor(
    readonly members: ClusterMember[],
    private readonly specs: Map<bigint, MemberProcessSpec>,
    /** proxies.get(`${from}->${to}`) */
    readonly proxies: Map<string, P>,
    private readonly ownedRoot: string | undefined,
    private readonly clientCredentials: ChannelCredentials | undefined,
    private readonly root: string,
    private readonly options: LocalClusterOptions<P>,
  ) {}

  /**
   * Picks ports, starts every member and waits until each serves /healthz. The ports were free a
   * moment before the members bind them, so another process may take one in between: a start
   * that fails on an address in use is undone (members killed, their data dirs removed) and
   * tried again on fresh ports, at most START_ATTEMPTS times. Any other failure is thrown at once.
   */
  static async start<P extends LinkProxy = LinkProxy>(options: LocalClusterOptions<P>): Promise<LocalCluster<P>> {
    const size = options.size ?? 3;
    const ids = options.memberIds ?? Array.from({ length: size }, (_, i) => BigInt(i + 1));
    for (let attempt = 1; ; attempt++) {
      try {
        return await LocalCluster.startOnce(options, ids);
      } catch (error) {
        if (attempt >= START_ATTEMPTS || !(error instanceof AddressInUseError)) throw error;
      }
    }
  }

  private static async startOnce<P extends LinkProxy>(options: LocalClusterOptions<P>, ids: readonly bigint[]): Promise<LocalCluster<P>> {
    const ownedRoot = options.dataRoot === undefined ? await mkdtemp(join(tmpdir(), 'ward-cluster-')) : undefined;
    const root = options.dataRoot ?? ownedRoot!;
    const ports = await (options.pickPorts ?? freePorts)(3 * ids.length);
    const members: ClusterMember[] = ids.map((id, i) => ({
      id,
      name: `node-${i + 1}`,
      apiAddress: `127.0.0.1:${ports[3 * i]}`,
      peerPort: ports[3 * i + 1]!,
      httpPort: ports[3 * i + 2]!,
      dataDir: join(root, `node-${i + 1}`),
      logFile: join(root, `node-${i + 1}.log`),
      process: undefined,
    }));
    const proxies = new Map<string, P>();
    if (options.proxy !== undefined) {
      // The members' ports were picked and let go; a proxy bound to port 0 may be handed one of
      // them again. Such a proxy is replaced (bounded), or two members would share an address.
      const taken = new Set(ports);
      const proxyTo = async (targetPort: number): Promise<P> => {
        for (let attempt = 0; attempt < 10; attempt++) {
          const proxy = await options.proxy!({ targetHost: '127.0.0.1', targetPort });
          if (!taken.has(proxy.port)) return proxy;
          await proxy.close();
        }
        throw new Error('LocalCluster: no proxy port apart from the members\' ports in 10 attempts');
      };
      for (const from of members) {
        for (const to of members) {
          if (from !== to) proxies.set(`${from.id}->${to.id}`, await proxyTo(to.peerPort));
        }
      }
    }
    const specs = new Map<bigint, MemberProcessSpec>();
    for (const self of members) {
      const list = members.map((m) => {
        const peerPort = m === self || proxies.size === 0 ? m.peerPort : proxies.get(`${self.id}->${m.id}`)!.port;
        return `${m.id}=${m.name}=127.0.0.1:${peerPort}=${m.apiAddress}`;
      });
      specs.set(self.id, {
        entry: options.entry,
        name: self.name,
        logFile: self.logFile,
        env: {
          RAFT_NODE_MEMBER_ID: self.id.toString(),
          RAFT_NODE_MEMBERS: list.join(','),
          RAFT_NODE_DATA_DIR: self.dataDir,
          RAFT_NODE_HTTP_ADDRESS: `127.0.0.1:${self.httpPort}`,
          ...options.env,
        },
        httpPort: self.httpPort,
      });
    }
    const cluster = new LocalCluster<P>(members, specs, proxies, ownedRoot, options.clientCredentials, root, options);
    if (options.prepare !== undefined) {
      try {
        await options.prepare(members.map((m) => ({ id: m.id, dataDir: m.dataDir, membersEnv: specs.get(m.id)!.env['RAFT_NODE_MEMBERS']! })));
      } catch (error) {
        await cluster.stop();
        throw error;
      }
    }
    const starts = await Promise.allSettled(members.map((m) => cluster.startMember(m.id)));
    const failed = starts.find((start): start is PromiseRejectedResult => start.status === 'rejected');
    if (failed === undefined) return cluster;
    await cluster.stop();
    const reason = failed.reason as unknown;
    if (reason instanceof Error && reason.message.includes('EADDRINUSE')) {
      if (ownedRoot === undefined) await Promise.all(members.map((m) => rm(m.dataDir, { recursive: true, force: true })));
      throw new AddressInUseError(reason.message);
    }
    throw reason;
  }

  member(id: bigint): ClusterMember {
    const member = this.members.find((m) => m.id === id);
    if (member === undefined) throw new TypeError(`no member ${id}`);
    return member;
  }

  /** A (cached) internal API client of member `id`. */
  client(id: bigint): NodeApiClient {
    let client = this.clients.get(id);
    if (client === undefined) {
      client = new NodeApiClient(this.member(id).apiAddress, this.clientCredentials);
      this.clients.set(id, client);
    }
    return client;
  }

  /** Spawns a member's process without waiting for it (for boots expected to fail). */
  spawnMember(id: bigint): MemberProcess {
    const member = this.member(id);
    if (member.process?.running) throw new TypeError(`member ${id} is running`);
    member.process = MemberProcess.spawn(this.specs.get(id)!);
    return member.process;
  }

  /** Starts (or restarts) a member's process and waits until it serves /healthz. */
  async startMember(id: bigint): Promise<MemberProcess> {
    const member = this.member(id);
    if (member.process?.running) throw new TypeError(`member ${id} is running`);
    member.process = await MemberProcess.start(this.specs.get(id)!);
    return member.process;
  }

  /** kill -9 (or another signal) and wait for the exit. Returns when the process is gone. */
  async kill(id: bigint, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.member(id).process?.kill(signal);
  }

  pause(id: bigint): void {
    this.member(id).process?.signal('SIGSTOP');
  }

  resume(id: bigint): void {
    this.member(id).process?.signal('SIGCONT');
  }

  proxy(from: bigint, to: bigint): P {
    const proxy = this.proxies.get(`${from}->${to}`);
    if (proxy === undefined) throw new TypeError(`no proxy ${from}->${to} (start the cluster with a proxy factory)`);
    return proxy;
  }

  /**
   * Every proxy that carries traffic from or to `member`. A member that joined later is reached by
   * every other member through one inbound proxy (its replicated peer URL); its own links to the
   * others are per link. So for a member of the initial set, the links towards joined members are
   * that shared proxy and are not included (blocking them would cut the joined member off from
   * everyone).
   */
  links(member: bigint): P[] {
    const out: P[] = [];
    for (const [key, proxy] of this.proxies) {
      const [from, to] = key.split('->');
      if (from === member.toString() || to === member.toString()) out.push(proxy);
    }
    const inbound = this.inbound.get(member);
    if (inbound !== undefined) out.push(inbound);
    return out;
  }

  /** Every proxy: per link, and joined members' inbound ones. */
  allProxies(): P[] {
    return [...this.proxies.values(), ...this.inbound.values(), ...this.plannedInbound.values()];
  }

  /** Every running member's Status, in member order (undefined for unreachable ones). */
  async statuses(deadlineMs = 1000): Promise<(Awaited<ReturnType<NodeApiClient['status']>> | undefined)[]> {
    return Promise.all(this.members.map((m) => (m.process?.running ? this.client(m.id).status(deadlineMs).catch(() => undefined) : undefined)));
  }

  /**
   * Waits until every running member names the same leader in the same term, and returns it.
   * `except` members are ignored (e.g. one just killed).
   */
  async waitForLeader(timeoutMs: number, except: readonly bigint[] = []): Promise<bigint> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const statuses = (await this.statuses()).filter((s, i) => s !== undefined && !except.includes(this.members[i]!.id));
      const leaders = new Set(statuses.map((s) => `${s!.leader_id}@${s!.raft_term}`));
      const first = statuses[0];
      if (first !== undefined && leaders.size === 1 && first.leader_id !== '0' && !except.includes(BigInt(first.leader_id))) {
        const running = this.members.filter((m) => m.process?.running && !except.includes(m.id)).length;
        if (statuses.length === running) return BigInt(first.leader_id);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no agreed leader within ${timeoutMs} ms`);
  }

  /** Free ports and a data directory for a member about to be added (its id comes from MemberAdd). */
  async planMember(): Promise<PlannedMember> {
    const [api, peer, http] = await freePorts(3);
    const n = this.members.length + 1;
    const name = `node-${n}`;
    let advertised = peer!;
    if (this.options.proxy !== undefined) {
      const inbound = await this.options.proxy({ targetHost: '127.0.0.1', targetPort: peer! });
      this.plannedInbound.set(name, inbound);
      advertised = inbound.port;
    }
    return { name, apiAddress: `127.0.0.1:${api}`, peerPort: peer!, peerUrl: `http://127.0.0.1:${advertised}`, httpPort: http!, dataDir: join(this.root, name), logFile: join(this.root, `${name}.log`) };
  }

  /**
   * Starts member `id` (added to the cluster beforehand) with RAFT_NODE_INITIAL_CLUSTER_STATE=existing
   * and the member list `listed` (ids of this cluster's members, plus itself), as an operator would.
   */
  async joinMember(id: bigint, planned: PlannedMember, listed: readonly bigint[]): Promise<MemberProcess> {
    const { peerUrl: _url, ...where } = planned;
    const member: ClusterMember = { id, ...where, process: undefined };
    this.members.push(member);
    const inbound = this.plannedInbound.get(planned.name);
    if (inbound !== undefined) {
      this.plannedInbound.delete(planned.name);
      this.inbound.set(id, inbound);
    }
    // with proxies, the newcomer reaches each listed member through a link proxy of its own
    const peerPortFor = async (m: ClusterMember): Promise<number> => {
      if (m === member || this.options.proxy === undefined) return m.peerPort;
      const proxy = await this.options.proxy({ targetHost: '127.0.0.1', targetPort: m.peerPort });
      this.proxies.set(`${id}->${m.id}`, proxy);
      return proxy.port;
    };
    const entries: string[] = [];
    for (const m of [...listed.filter((m) => m !== id).map((m) => this.member(m)), member]) entries.push(`${m.id}=${m.name}=127.0.0.1:${await peerPortFor(m)}=${m.apiAddress}`);
    this.specs.set(id, {
      entry: this.options.entry,
      name: member.name,
      logFile: member.logFile,
      env: {
        RAFT_NODE_MEMBER_ID: id.toString(),
        RAFT_NODE_MEMBERS: entries.join(','),
        RAFT_NODE_DATA_DIR: member.dataDir,
        RAFT_NODE_HTTP_ADDRESS: `127.0.0.1:${member.httpPort}`,
        RAFT_NODE_INITIAL_CLUSTER_STATE: 'existing',
        ...this.options.env,
      },
      httpPort: member.httpPort,
    });
    return this.startMember(id);
  }

  /** Stops every member (SIGKILL), closes proxies and clients, removes an owned temp dir. */
  async stop(): Promise<void> {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
    await Promise.all(this.members.map((m) => m.process?.kill('SIGKILL')));
    await Promise.all(this.allProxies().map((p) => p.close()));
    if (this.ownedRoot !== undefined) await rm(this.ownedRoot, { recursive: true, force: true });
  }
}
