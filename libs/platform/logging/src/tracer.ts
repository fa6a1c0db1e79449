/**
 * Verbose tracing switched on by name, as grpc-js does with GRPC_TRACE: a comma list such as
 * `raft,gateway,-transport`; `all` enables everything, a leading `-` excludes a name.
 * The spec comes from the app's config (`<APP>_TRACE`), never read from the environment here.
 */
export interface Tracer {
  enabled(name: string): boolean;
}

export function createTracer(spec: string): Tracer {
  const included = new Set<string>();
  const excluded = new Set<string>();
  for (const raw of spec.split(',')) {
    const name = raw.trim();
    if (name.length === 0) continue;
    if (name.startsWith('-')) excluded.add(name.slice(1));
    else included.add(name);
  }
  const all = included.has('all');
  return {
    enabled: (name) => !excluded.has(name) && (all || included.has(name)),
  };
}
