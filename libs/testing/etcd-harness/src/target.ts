/**
 * Something that speaks etcd's v3 API on one client endpoint: a real etcd cluster or ward
 * (raft-nodes + gateway). Scenarios, suites and benchmarks take a Target and never care which.
 */
export interface Target {
  readonly kind: 'etcd' | 'ward';
  /** `127.0.0.1:<port>`: where clients connect (etcd's first member, ward's gateway). */
  readonly clientEndpoint: string;
  /** Base URL of etcd's JSON gateway (`POST <url>/v3/kv/range`): etcd's client URL, ward's gateway HTTP port. */
  readonly jsonGatewayUrl: string;
  /** Every address the target listens on, for output normalisation. */
  readonly clientEndpoints: readonly string[];
  /** The server processes (etcd's members; ward's raft-nodes and gateway), for CPU accounting. */
  serverProcesses(): readonly ServerProcess[];
  /** True while every process of the target is running. */
  allAlive(): boolean;
  stop(): Promise<void>;
}

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
}
