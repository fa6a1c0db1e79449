/**
 * `security.istio.io/v1` and `v1beta1` AuthorizationPolicy (proto
 * `istio.security.v1beta1.AuthorizationPolicy`; both API versions share it).
 *
 * Decoding follows istiod (jsonpb over the YAML converted to JSON):
 * - a list that is absent, `null` or empty (`[]`) is `undefined` here, exactly as istiod sees a
 *   nil slice; when present a list has at least one element;
 * - a `null` element of a message list decodes as an empty message (`rules: [null]` is the
 *   match-all rule `{}`), a `null` element of a string list as `''`;
 * - a message field set to `null` is absent; `{}` is present and empty (`source: {}`).
 */
import type { ObjectMeta, PolicyTargetReference, WorkloadSelector } from './meta';

/** Enum `AuthorizationPolicy.Action`, in proto number order (ALLOW = 0 is the default). */
export const AUTHORIZATION_POLICY_ACTIONS = ['ALLOW', 'DENY', 'AUDIT', 'CUSTOM'] as const;
export type AuthorizationPolicyAction = (typeof AUTHORIZATION_POLICY_ACTIONS)[number];

/** `Source`: who sends the request. Values in one field are ORed, fields are ANDed. */
export interface Source {
  readonly principals?: readonly string[];
  readonly notPrincipals?: readonly string[];
  readonly requestPrincipals?: readonly string[];
  readonly notRequestPrincipals?: readonly string[];
  readonly namespaces?: readonly string[];
  readonly notNamespaces?: readonly string[];
  readonly serviceAccounts?: readonly string[];
  readonly notServiceAccounts?: readonly string[];
  readonly ipBlocks?: readonly string[];
  readonly notIpBlocks?: readonly string[];
  readonly remoteIpBlocks?: readonly string[];
  readonly notRemoteIpBlocks?: readonly string[];
  readonly trustDomains?: readonly string[];
  readonly notTrustDomains?: readonly string[];
}

/** `Operation`: what the request does. Ports are strings (`"8080"`), as in the CRD. */
export interface Operation {
  readonly hosts?: readonly string[];
  readonly notHosts?: readonly string[];
  readonly ports?: readonly string[];
  readonly notPorts?: readonly string[];
  readonly methods?: readonly string[];
  readonly notMethods?: readonly string[];
  readonly paths?: readonly string[];
  readonly notPaths?: readonly string[];
}

/** `Rule.From`. `source` is absent when not written or `null`. */
export interface RuleFrom {
  readonly source?: Source;
}

/** `Rule.To`. `operation` is absent when not written or `null`. */
export interface RuleTo {
  readonly operation?: Operation;
}

/** `Condition` of `when`. `key` is `''` when absent. */
export interface Condition {
  readonly key: string;
  readonly values?: readonly string[];
  readonly notValues?: readonly string[];
}

/** `Rule`: `from` entries are ORed, `to` entries are ORed, `when` conditions are ANDed. */
export interface Rule {
  readonly from?: readonly RuleFrom[];
  readonly to?: readonly RuleTo[];
  readonly when?: readonly Condition[];
}

/** `AuthorizationPolicy.ExtensionProvider` (only with action CUSTOM). */
export interface ExtensionProviderRef {
  readonly name: string;
}

/** The `spec` of an AuthorizationPolicy. */
export interface AuthorizationPolicySpec {
  readonly selector?: WorkloadSelector;
  readonly targetRef?: PolicyTargetReference;
  readonly targetRefs?: readonly PolicyTargetReference[];
  /** Absent (or `[]`): for ALLOW, the "allow nothing" policy; for DENY, a validation error. */
  readonly rules?: readonly Rule[];
  /** `ALLOW` when not written (proto default). */
  readonly action: AuthorizationPolicyAction;
  readonly provider?: ExtensionProviderRef;
}

/** Accepted `apiVersion` values for the two security kinds. */
export const SECURITY_API_VERSIONS = ['security.istio.io/v1', 'security.istio.io/v1beta1'] as const;
export type SecurityApiVersion = (typeof SECURITY_API_VERSIONS)[number];

/** A decoded AuthorizationPolicy with its metadata. */
export interface AuthorizationPolicy {
  readonly apiVersion: SecurityApiVersion;
  readonly kind: 'AuthorizationPolicy';
  readonly metadata: ObjectMeta;
  readonly spec: AuthorizationPolicySpec;
}
