// Envoy's uri_template path matcher for the operators istiod emits: `*` is exactly one path
// segment, `**` any run of path characters including `/`; everything else is literal.
import { quoteMeta } from '../authz/string-matchers';
import { fullMatchRegex } from './regex';

const PCHAR = "[a-zA-Z0-9\\-._~%!$&'()+,;:@=]";

/** Regex equivalent of a path template (literal segments quoted). */
export function uriTemplateRegex(template: string): string {
  return template
    .split('/')
    .map((segment) => (segment === '**' ? `(?:${PCHAR}|/)*` : segment === '*' ? `${PCHAR}+` : quoteMeta(segment)))
    .join('/');
}

/** True when `path` (query already removed) matches `template`. */
export function matchUriTemplate(template: string, path: string): boolean {
  return fullMatchRegex(uriTemplateRegex(template)).test(path);
}
