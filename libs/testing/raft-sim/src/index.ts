// @ward/testing/raft-sim: a deterministic fault simulator for @ward/raft/core.
export type { SimProfile } from './profile';
export { CALM_PROFILE, CHAOS_PROFILE, LOSSY_PROFILE, PROFILES, withOverrides } from './profile';
export type { RunOptions, SimResult, SimStats } from './simulation';
export { Simulation, runSimulation } from './simulation';
export type { Violation, ViolationKind } from './violations';
export { isSafetyViolation } from './violations';
export type { CasCompare, KvApplyResult, KvCommand, KvValue } from './kv-state-machine';
export { KvStateMachine, decodeCommand, encodeCommand } from './kv-state-machine';
export { deriveSeed, rngFor } from './seeds';
export { TraceHash } from './trace-hash';
export { EventQueue } from './event-queue';
export type { CrashLoss, DurableImage } from './sim-disk';
export { SimDisk } from './sim-disk';
export type { MessageFate, PartitionKind } from './sim-network';
export { SimNetwork } from './sim-network';
export { SafetyChecker } from './invariants';
