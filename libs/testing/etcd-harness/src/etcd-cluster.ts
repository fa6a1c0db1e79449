import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '@ward/testing/cluster';
import { ManagedProcess } from './managed-process';
import type { ServerProcess } from './target';
import { httpOk, waitUntil } from './wait-until';

/** How long a fresh etcd cluster may take to elect a leader and answer /health. */
const ETCD_READY_TIMEOUT_MS = 30_000;
/** Attempts with fresh ports when a member dies during start (a port taken in between). */
const START_ATTEMPTS = 3;

export interface EtcdClusterOptions {
  /** 1 or 3 members. */
  readonly members?: 1 | 3;
  /** etcd's `--auth-token` value: `simple` (default) or e.g. `jwt,priv-key=<file>,sign-method=HS256,ttl=60s`. */
  readonly authToken?: string;
  /** etcd's `--auth-token-ttl` for simple tokens (default 300). */
  readonly authTokenTtlSeconds?: number;
  /** etcd's `--bcrypt-cost`; tests lower it to 4 to keep authentication cheap. Default 10. */
  readonly bcryptCost?: number;
  /** The etcd binary (default `etcd` on PATH; Debian installs /usr/bin/etcd 3.4.23). */
  readonly etcdBinary?: string;
  /** Extra etcd flags appended to every member's command line. */
  readonly extraArgs?: readonly string[];
}

export interface EtcdMember {
  readonly name: string;
  readonly clientUrl: string;
  /** `127.0.0.1:<port>` — the form etcdctl's `--endpoints` and gRPC clients take. */
  readonly clientEndpoint: string;
  readonly peerUrl: string;
  /** Replaced by `startMember` after a `stopMember`. */
  process: ManagedProcess;
  readonly dataDir: string;
}

/** A running real etcd cluster on 127.0.0.1 with its data in a temporary directory. */
export interface EtcdCluster {
  readonly kind: 'etcd';
  readonly members: readonly EtcdMember[];
  /** The first member's client endpoint: where single-endpoint scenarios connect. */
  readonly clientEndpoint: string;
  readonly clientEndpoints: readonly string[];
  readonly jsonGatewayUrl: string;
  readonly dataDir: string;
  serverProcesses(): readonly ServerProcess[];
  /** True while every member process is running. */
  allAlive(): boolean;
  /** Stops member `index` (SIGTERM, then SIGKILL); its data stays. */
  stopMember(index: number): Promise<void>;
  /** Starts member `index` again from its data dir (after stopMember). */
  startMember(index: number): void;
  /** Stops every member (SIGTERM, then SIGKILL) and removes the data directory. */
  stop(): Promise<void>;
}

/** Starts a real etcd (single member or 3 members) and waits until every member is healthy. */
export async function startEtcdCluster(options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const dataDir = await mkdtemp(join(tmpdir(), 'ward-etcd-'));
    const members = await launchMembers(options, dataDir);
    try {
      await waitUntil(
        `etcd (${members.length} member(s)) to become healthy`,
        async () => {
          const dead = members.find((member) => !member.process.alive);
          if (dead) throw new MemberDiedError(dead);
          const health = await Promise.all(members.map((member) => httpOk(`${member.clientUrl}/health`)));
          return health.every(Boolean);
        },
        ETCD_READY_TIMEOUT_MS,
        200,
      );
      return clusterHandle(members, dataDir);
    } catch (error) {
      lastError = error;
      await Promise.all(members.map((member) => member.process.stop('SIGKILL')));
      await rm(dataDir, { recursive: true, force: true });
      const output = members.map((member) => `--- ${member.name}\n${member.process.output().slice(-2000)}`).join('\n');
      lastError = new Error(`startEtcdCluster attempt ${attempt}: ${(error as Error).message}\n${output}`);
    }
  }
  throw lastError;
}

class MemberDiedError extends Error {
  constructor(member: EtcdMember) {
    super(`etcd member ${member.name} exited during start (${JSON.stringify(member.process.exit)})`);
  }
}

async function launchMembers(options: EtcdClusterOptions, dataDir: string): Promise<EtcdMember[]> {
  const count = options.members ?? 1;
  const ports = await freePorts(count * 2);
  const names = Array.from({ length: count }, (_, index) => `m${index + 1}`);
  const peerUrls = names.map((_, index) => `http://127.0.0.1:${ports[count + index]}`);
  const initialCluster = names.map((name, index) => `${name}=${peerUrls[index]}`).join(',');
  return names.map((name, index) => {
    const clientUrl = `http://127.0.0.1:${ports[index]}`;
    const peerUrl = peerUrls[index] as string;
    const args = [
      '--name', name,
      '--data-dir', join(dataDir, name),
      '--listen-client-urls', clientUrl,
      '--advertise-client-urls', clientUrl,
      '--listen-peer-urls', peerUrl,
      '--initial-advertise-peer-urls', peerUrl,
      '--initial-cluster', initialCluster,
      '--initial-cluster-state', 'new',
      '--initial-cluster-token', `ward-harness-${ports[0]}`,
      '--auth-token', options.authToken ?? 'simple',
      '--auth-token-ttl', String(options.authTokenTtlSeconds ?? 300),
      '--bcrypt-cost', String(options.bcryptCost ?? 10),
      '--logger', 'zap',
      '--log-level', 'warn',
      ...(options.extraArgs ?? []),
    ];
    const process = new ManagedProcess({ name: `etcd-${name}`, command: options.etcdBinary ?? 'etcd', args });
    return { name, clientUrl, clientEndpoint: clientUrl.slice('http://'.length), peerUrl, process, dataDir: join(dataDir, name) };
  });
}

function clusterHandle(members: EtcdMember[], dataDir: string): EtcdCluster {
  let stopping: Promise<void> | undefined;
  return {
    kind: 'etcd',
    members,
    clientEndpoint: (members[0] as EtcdMember).clientEndpoint,
    clientEndpoints: members.map((member) => member.clientEndpoint),
    jsonGatewayUrl: (members[0] as EtcdMember).clientUrl,
    dataDir,
    serverProcesses: () => members.flatMap((member) => (member.process.pid === undefined ? [] : [{ name: member.process.name, pid: member.process.pid }])),
    allAlive: () => members.every((member) => member.process.alive),
    stopMember: (index) => members[index]!.process.stop(),
    startMember: (index) => {
      members[index]!.process = members[index]!.process.respawn();
    },
    stop: () => {
      stopping ??= (async () => {
        await Promise.all(members.map((member) => member.process.stop()));
        await rm(dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
