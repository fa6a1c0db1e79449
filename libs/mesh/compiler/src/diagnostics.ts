// What the compiler reports: collected, never thrown. Each diagnostic names the resource and the
// field path it is about, so callers can map it back to a source line.

/** Codes of compiler diagnostics; stable and never reused (listed in the README). */
export const COMPILER_DIAGNOSTIC_CODES = [
  'COMPILE_INVALID_INPUT',
  'COMPILE_UNKNOWN_ATTRIBUTE',
  'COMPILE_INVALID_VALUE',
  'COMPILE_TCP_RULE_DROPPED',
  'COMPILE_TCP_RULE_WIDENED',
  'COMPILE_TARGET_REF_IGNORED',
  'COMPILE_DRY_RUN_INVALID',
  'COMPILE_POLICY_WITHOUT_RULES',
  'COMPILE_FOREIGN_TRUST_DOMAIN',
  'COMPILE_CUSTOM_PROVIDER_INVALID',
  'COMPILE_CUSTOM_MULTIPLE_PROVIDERS',
  'COMPILE_CUSTOM_HTTP_PROVIDER_ON_TCP',
  'COMPILE_PEER_AUTHN_IGNORED',
  'COMPILE_PORT_MTLS_PASSTHROUGH',
  'COMPILE_PORT_CONFLICT',
] as const;

export type CompilerDiagnosticCode = (typeof COMPILER_DIAGNOSTIC_CODES)[number];

/** `error`: the input could not be translated faithfully (the output fails closed there). */
export type CompilerSeverity = 'error' | 'warning' | 'info';

/** The resource a diagnostic is about. */
export interface DiagnosticResource {
  readonly kind: 'AuthorizationPolicy' | 'PeerAuthentication' | 'MeshSettings' | 'Workload';
  readonly namespace: string;
  readonly name: string;
}

/** One finding of the compiler. */
export interface CompilerDiagnostic {
  readonly code: CompilerDiagnosticCode;
  readonly severity: CompilerSeverity;
  readonly message: string;
  readonly resource?: DiagnosticResource;
  /** Field path inside the resource, e.g. `spec.rules[2].from[0].source.principals[1]`. */
  readonly path?: string;
}

/** Where builders put their findings. */
export type DiagnosticSink = CompilerDiagnostic[];

/** True when any diagnostic is an error. */
export function hasCompileErrors(diagnostics: readonly CompilerDiagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}
