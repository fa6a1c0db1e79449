// PeerAuthentication → the effective mTLS mode of a sidecar workload, per port (spec §4.1-4.3).
// Mesh level (root namespace, no selector), namespace level (no selector) and workload level
// (selector, not in the root namespace) apply in that order; UNSET inherits; the oldest policy
// of a level wins; port-level modes come only from the chosen workload-level policy.
import { portLevelMtlsEntries, type MutualTlsMode, type PeerAuthentication } from '@ward/mesh/istio-api';
import { compareByCreation, selectorMatches } from '../authz/policy-selection';
import type { DiagnosticResource, DiagnosticSink } from '../diagnostics';
import type { Workload } from '../input';

/** The three effective modes (UNSET never survives resolution). */
export type MtlsMode = 'STRICT' | 'PERMISSIVE' | 'DISABLE';

/** Which policy decided a level. */
export interface PolicyRef {
  readonly namespace: string;
  readonly name: string;
}

/** The resolved mTLS settings of one workload. */
export interface EffectiveMtls {
  /** Mode of every port without a port-level entry. */
  readonly mode: MtlsMode;
  /** Port-level modes (container ports), ascending. */
  readonly perPort: ReadonlyArray<readonly [number, MtlsMode]>;
  readonly meshPolicy?: PolicyRef;
  readonly namespacePolicy?: PolicyRef;
  readonly workloadPolicy?: PolicyRef;
}

/** The mode for traffic to `port` (a container port; 0 for undeclared ports without an entry). */
export function mtlsModeForPort(mtls: EffectiveMtls, port: number): MtlsMode {
  for (const [entryPort, mode] of mtls.perPort) if (entryPort === port) return mode;
  return mtls.mode;
}

function isSet(mode: MutualTlsMode | undefined): mode is MtlsMode {
  return mode !== undefined && mode !== 'UNSET';
}

interface Candidate {
  readonly policy: PeerAuthentication;
  readonly namespace: string;
}

function refOf(candidate: Candidate): PolicyRef {
  return { namespace: candidate.namespace, name: candidate.policy.metadata.name };
}

function resourceOf(candidate: Candidate): DiagnosticResource {
  return { kind: 'PeerAuthentication', ...refOf(candidate) };
}

function hasSelector(policy: PeerAuthentication): boolean {
  return Object.keys(policy.spec.selector?.matchLabels ?? {}).length > 0;
}

function oldest(candidates: readonly Candidate[], level: string, sink: DiagnosticSink): Candidate | undefined {
  const sorted = [...candidates].sort((a, b) => compareByCreation(a.policy, b.policy));
  for (const ignored of sorted.slice(1)) {
    sink.push({
      code: 'COMPILE_PEER_AUTHN_IGNORED',
      severity: 'warning',
      resource: resourceOf(ignored),
      message: `${level} PeerAuthentication ${sorted[0]?.namespace}/${sorted[0]?.policy.metadata.name} is older and wins; this one is ignored`,
    });
  }
  return sorted[0];
}

/** Resolves the effective mTLS settings of `workload`. */
export function composePeerAuthentication(
  policies: readonly PeerAuthentication[],
  workload: Workload,
  rootNamespace: string,
  defaultNamespace: string,
  sink: DiagnosticSink,
): EffectiveMtls {
  const candidates: Candidate[] = policies
    .map((policy) => ({ policy, namespace: policy.metadata.namespace === '' ? defaultNamespace : policy.metadata.namespace }))
    .filter((c) => (c.namespace === workload.namespace || c.namespace === rootNamespace) && selectorMatches(c.policy.spec.selector?.matchLabels, workload.labels));
  const mesh = oldest(candidates.filter((c) => !hasSelector(c.policy) && c.namespace === rootNamespace), 'mesh-level', sink);
  const namespace = oldest(candidates.filter((c) => !hasSelector(c.policy) && c.namespace !== rootNamespace), 'namespace-level', sink);
  for (const ignored of candidates.filter((c) => hasSelector(c.policy) && c.namespace === rootNamespace)) {
    sink.push({ code: 'COMPILE_PEER_AUTHN_IGNORED', severity: 'warning', resource: resourceOf(ignored), path: 'spec.selector', message: 'a PeerAuthentication with a selector in the root namespace does not apply to sidecars' });
  }
  const workloadLevel = oldest(candidates.filter((c) => hasSelector(c.policy) && c.namespace !== rootNamespace), 'workload-level', sink);
  let mode: MtlsMode = 'PERMISSIVE';
  for (const level of [mesh, namespace, workloadLevel]) {
    const levelMode = level?.policy.spec.mtls?.mode;
    if (isSet(levelMode)) mode = levelMode;
  }
  const perPort: Array<readonly [number, MtlsMode]> = [];
  for (const entry of workloadLevel === undefined ? [] : portLevelMtlsEntries(workloadLevel.policy.spec)) {
    if (!Number.isInteger(entry.port) || entry.port < 1 || entry.port > 65535) {
      sink.push({ code: 'COMPILE_INVALID_VALUE', severity: 'error', resource: resourceOf(workloadLevel as Candidate), path: `spec.portLevelMtls[${entry.port}]`, message: `port must be in range 1..65535; the entry is ignored` });
      continue;
    }
    perPort.push([entry.port, isSet(entry.mtls.mode) ? entry.mtls.mode : mode]);
  }
  return {
    mode,
    perPort,
    ...(mesh !== undefined ? { meshPolicy: refOf(mesh) } : {}),
    ...(namespace !== undefined ? { namespacePolicy: refOf(namespace) } : {}),
    ...(workloadLevel !== undefined ? { workloadPolicy: refOf(workloadLevel) } : {}),
  };
}
