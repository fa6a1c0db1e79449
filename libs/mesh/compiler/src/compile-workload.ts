// The compiler's entry point: one workload, its policies and the mesh → the Envoy configuration
// istiod would send its sidecar for inbound traffic, plus every diagnostic.
import type { HttpFilter, Listener, NetworkFilter } from '@ward/mesh/envoy-api';
import { composePeerAuthentication, type EffectiveMtls } from './authn/peer-authentication';
import { buildAuthorizationFilters } from './authz/authz-filters';
import type { SelectedPolicies } from './authz/policy-selection';
import { dedupeDiagnostics } from './authz/rule-set';
import { hasCompileErrors, type CompilerDiagnostic, type DiagnosticSink } from './diagnostics';
import { DEFAULT_COMPILE_OPTIONS, DEFAULT_MESH_SETTINGS, validateCompileInput, type CompileInput, type CompileOptions, type MeshSettings, type Workload } from './input';
import { buildInboundListener } from './listener/inbound-listener';

/** An applied AuthorizationPolicy, as listed in the output. */
export interface AppliedPolicy {
  readonly namespace: string;
  readonly name: string;
  readonly dryRun: boolean;
  /** CUSTOM only: the provider name. */
  readonly provider?: string;
}

/** The compiled configuration of one workload. */
export interface WorkloadConfig {
  readonly workload: Workload;
  readonly mesh: MeshSettings;
  /** Authorization filters of the inbound HTTP connection manager, in chain order. */
  readonly httpFilters: readonly HttpFilter[];
  /** Authorization filters of inbound TCP chains, in chain order. */
  readonly networkFilters: readonly NetworkFilter[];
  /** The `virtualInbound` listener with those filters in every chain. */
  readonly listener: Listener;
  readonly mtls: EffectiveMtls;
  readonly policies: {
    readonly allow: readonly AppliedPolicy[];
    readonly deny: readonly AppliedPolicy[];
    readonly audit: readonly AppliedPolicy[];
    readonly custom: readonly AppliedPolicy[];
  };
}

/**
 * `ok: true` — the configuration is a faithful translation (diagnostics are warnings or info).
 * `ok: false` — something could not be translated: `config` (when present) fails closed there;
 * without `config` the input itself was unusable.
 */
export type CompileResult =
  | { readonly ok: true; readonly config: WorkloadConfig; readonly diagnostics: readonly CompilerDiagnostic[] }
  | { readonly ok: false; readonly config?: WorkloadConfig; readonly diagnostics: readonly CompilerDiagnostic[] };

/** Mesh settings with istiod's defaults for everything not given. */
export function resolveMeshSettings(partial: Partial<MeshSettings> | undefined): MeshSettings {
  return { ...DEFAULT_MESH_SETTINGS, ...(partial ?? {}) };
}

function applied(selected: SelectedPolicies): WorkloadConfig['policies'] {
  const list = (policies: SelectedPolicies['allow']): AppliedPolicy[] =>
    policies.map((p) => ({
      namespace: p.namespace,
      name: p.name,
      dryRun: p.dryRun,
      ...(p.policy.spec.action === 'CUSTOM' ? { provider: p.policy.spec.provider?.name ?? '' } : {}),
    }));
  return { allow: list(selected.allow), deny: list(selected.deny), audit: list(selected.audit), custom: list(selected.custom) };
}

/**
 * Compiles the inbound configuration of one sidecar workload.
 *
 * @example
 * ```ts
 * const result = compileWorkload({
 *   workload: { namespace: 'foo', labels: { app: 'httpbin' }, ports: [{ port: 8080, protocol: 'HTTP' }] },
 *   authorizationPolicies: policies,
 *   peerAuthentications: peerAuthns,
 * });
 * if (result.ok) console.log(toGoYaml(result.config.listener));
 * ```
 */
export function compileWorkload(input: CompileInput): CompileResult {
  const mesh = resolveMeshSettings(input.mesh);
  const options: CompileOptions = { ...DEFAULT_COMPILE_OPTIONS, ...(input.options ?? {}) };
  const problems = validateCompileInput(input, mesh);
  if (problems.length > 0) return { ok: false, diagnostics: problems };
  const sink: DiagnosticSink = [];
  const authz = buildAuthorizationFilters(
    {
      workload: input.workload,
      mesh,
      policies: input.authorizationPolicies ?? [],
      services: input.services ?? [],
      bundle: [mesh.trustDomain, ...mesh.trustDomainAliases],
      useFilterState: options.useFilterState,
      untranslatable: options.untranslatableRules,
      defaultNamespace: options.defaultNamespace,
      scope: 'all',
      ...(input.cache !== undefined ? { cache: input.cache } : {}),
    },
    sink,
  );
  const mtls = composePeerAuthentication(input.peerAuthentications ?? [], input.workload, mesh.rootNamespace, options.defaultNamespace, sink);
  const listener = buildInboundListener(input.workload, mesh, mtls, authz, sink);
  const config: WorkloadConfig = {
    workload: input.workload,
    mesh,
    httpFilters: authz.http,
    networkFilters: authz.tcp,
    listener,
    mtls,
    policies: applied(authz.selected),
  };
  const diagnostics = dedupeDiagnostics(sink);
  return hasCompileErrors(diagnostics) ? { ok: false, config, diagnostics } : { ok: true, config, diagnostics };
}
