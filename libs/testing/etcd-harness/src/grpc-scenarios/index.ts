import type { GrpcScenario } from '../grpc-scenario';
import { clusterCalls } from './cluster-calls';
import { knownDifferences, leases } from './differences';
import { simpleTokens } from './tokens';

/** Raw gRPC scenarios: equal steps are compared across targets, §8.2 steps checked per target. */
export const GRPC_SCENARIOS: readonly GrpcScenario[] = [simpleTokens, clusterCalls, knownDifferences, leases];
