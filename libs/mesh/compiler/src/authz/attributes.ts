// The attributes a rule can test, with the side of the Envoy policy they land on (spec §1.4).

/** Attribute kinds: one per istiod generator. */
export type AttributeKind =
  | 'destination.ip'
  | 'destination.port'
  | 'connection.sni'
  | 'experimental.envoy.filters'
  | 'source.ip'
  | 'remote.ip'
  | 'source.namespace'
  | 'source.serviceAccount'
  | 'source.trustDomain'
  | 'source.principal'
  | 'request.auth.principal'
  | 'request.auth.audiences'
  | 'request.auth.presenter'
  | 'request.headers'
  | 'request.auth.claims'
  | 'hosts'
  | 'methods'
  | 'paths';

/** Kinds that build one matcher from the whole value list (no or-wrapper per value). */
export const EXTENDED_KINDS: ReadonlySet<AttributeKind> = new Set([
  'experimental.envoy.filters',
  'request.auth.principal',
  'request.auth.audiences',
  'request.auth.presenter',
  'request.auth.claims',
]);

/** Kinds Envoy can only evaluate on HTTP requests (an error on a TCP filter chain). */
export const HTTP_ONLY_KINDS: ReadonlySet<AttributeKind> = new Set([
  'request.auth.principal',
  'request.auth.audiences',
  'request.auth.presenter',
  'request.headers',
  'request.auth.claims',
  'hosts',
  'methods',
  'paths',
]);

/** Which `when` key is which attribute; undefined for an unknown key (the rule is skipped). */
export function attributeOfConditionKey(key: string): { kind: AttributeKind; side: 'permission' | 'principal' } | undefined {
  switch (key) {
    case 'destination.ip':
    case 'destination.port':
    case 'connection.sni':
      return { kind: key, side: 'permission' };
    case 'source.ip':
    case 'remote.ip':
    case 'source.namespace':
    case 'source.trustDomain':
    case 'source.serviceAccount':
    case 'source.principal':
    case 'request.auth.principal':
    case 'request.auth.audiences':
    case 'request.auth.presenter':
      return { kind: key, side: 'principal' };
    default:
      if (key.startsWith('experimental.envoy.filters.')) return { kind: 'experimental.envoy.filters', side: 'permission' };
      if (key.startsWith('request.headers')) return { kind: 'request.headers', side: 'principal' };
      if (key.startsWith('request.auth.claims')) return { kind: 'request.auth.claims', side: 'principal' };
      return undefined;
  }
}
