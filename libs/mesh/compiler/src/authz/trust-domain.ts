// Trust-domain aliases (spec §1.6): principals naming the local trust domain (or `cluster.local`)
// are expanded to every trust domain of the bundle; `trustDomains` values naming one bundle entry
// are expanded to the whole bundle.

/** `cluster.local` stands for "the local trust domain" in principals. */
export const DEFAULT_TRUST_DOMAIN = 'cluster.local';

/** The mesh trust domain followed by its aliases, in that order. */
export type TrustDomainBundle = readonly string[];

function prefixMatch(text: string, pattern: string): boolean {
  return pattern.endsWith('*') && text.startsWith(pattern.slice(0, -1));
}

function suffixMatch(text: string, pattern: string): boolean {
  return pattern.startsWith('*') && text.endsWith(pattern.slice(1));
}

/** istiod's trust-domain `stringMatch`: exact, `*`, or a prefix/suffix pattern on either side. */
function matchesAny(trustDomain: string, bundle: TrustDomainBundle): boolean {
  return bundle.some(
    (entry) =>
      trustDomain === entry ||
      entry === '*' ||
      prefixMatch(trustDomain, entry) ||
      prefixMatch(entry, trustDomain) ||
      suffixMatch(trustDomain, entry) ||
      suffixMatch(entry, trustDomain),
  );
}

/** Outcome of rewriting one principal list. */
export interface PrincipalMigration {
  readonly principals: string[];
  /** Principals whose trust domain is neither local nor an alias (kept unchanged, istiod warns). */
  readonly foreignTrustDomain: string[];
}

/** Rewrites `principals` values for the bundle (istiod `ReplaceTrustDomainAliases`). */
export function replaceTrustDomainAliases(principals: readonly string[], bundle: TrustDomainBundle): PrincipalMigration {
  const out: string[] = [];
  const foreign: string[] = [];
  for (const principal of principals) {
    const parts = principal.split('/');
    if (parts.length !== 5 || parts[0] === '*') {
      out.push(principal);
      continue;
    }
    const trustDomain = parts[0] ?? '';
    if (!matchesAny(trustDomain, bundle) && trustDomain !== DEFAULT_TRUST_DOMAIN) {
      foreign.push(principal);
      out.push(principal);
      continue;
    }
    const expanded: string[] = [];
    for (const entry of bundle) {
      const candidate = suffixMatch(entry, trustDomain) ? principal : [entry, ...parts.slice(1)].join('/');
      if (!expanded.includes(candidate)) expanded.push(candidate);
    }
    out.push(...expanded);
  }
  return { principals: out, foreignTrustDomain: foreign };
}

/** Expands `trustDomains` values (istiod `ExpandTrustDomainAliases`), first occurrence kept. */
export function expandTrustDomainAliases(values: readonly string[], bundle: TrustDomainBundle): string[] {
  const out: string[] = [];
  for (const value of values) {
    for (const candidate of bundle.includes(value) ? bundle : [value]) {
      if (!out.includes(candidate)) out.push(candidate);
    }
  }
  return out;
}
