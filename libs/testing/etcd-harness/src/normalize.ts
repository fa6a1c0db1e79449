/**
 * Normalisation of etcdctl output so two servers can be compared: only what legitimately differs
 * between two clusters is replaced — cluster and member ids, raft terms, absolute revisions (kept
 * as offsets from the scenario's baseline revision, so a different numbering still shows), client
 * log timestamps, the endpoint addresses and measured durations (`endpoint health`'s
 * `took = 1.2ms`). Everything else is kept verbatim.
 */

/** Context for one scenario run. */
export interface NormalizeContext {
  /** The KV revision observed right before the scenario's first step. */
  readonly baselineRevision: number;
  /** Endpoint addresses of the target (`127.0.0.1:port`), replaced by `<endpoint>`. */
  readonly endpoints: readonly string[];
}

const ID_FIELDS = /"(cluster_id|member_id|ID|leader|raft_term|raft_index|raft_applied_index)":\s*(\d+)/g;
/** A Go `time.Duration` as etcdctl prints how long a probe took. */
const DURATION = /took = [0-9.]+(?:ns|µs|us|ms|s|m[0-9.]+s)/g;
const REVISION_FIELDS = /"(revision|create_revision|mod_revision|compact_revision)":\s*(\d+)/g;

function relativeRevision(value: string, baseline: number): string {
  const delta = Number(value) - baseline;
  return delta >= 0 ? `"base+${delta}"` : `"base${delta}"`;
}

function replaceEndpoints(text: string, endpoints: readonly string[]): string {
  let out = text;
  for (const endpoint of endpoints) out = out.split(endpoint).join('<endpoint>');
  return out.replace(/endpoint:\/\/client-[0-9a-f-]+\//g, 'endpoint://client-<uuid>/');
}

/** `lease grant`'s server-chosen ID, and a time-to-live's remaining seconds (timing, not behaviour). */
const GRANTED_LEASE = /^lease [0-9a-f]{16} granted with TTL\((\d+)s\)$/gm;
const REMAINING_TTL = /remaining\(\d+s\)/g;

/** Normalises etcdctl stdout (text or `-w json`). */
export function normalizeStdout(stdout: string, context: NormalizeContext): string {
  const withLeases = stdout.replace(GRANTED_LEASE, 'lease <id> granted with TTL($1s)').replace(REMAINING_TTL, 'remaining(<s>)');
  const withIds = withLeases.replace(ID_FIELDS, (_, field: string) => `"${field}":"<${field}>"`);
  const withRevisions = withIds.replace(
    REVISION_FIELDS,
    (_, field: string, value: string) => `"${field}":${relativeRevision(value, context.baselineRevision)}`,
  );
  const withDurations = withRevisions.replace(DURATION, 'took = <duration>');
  return replaceEndpoints(withDurations, context.endpoints);
}

/**
 * Normalises etcdctl stderr. The Go client's JSON log lines (`{"level":"warn","ts":...}`) keep
 * only their level, message, attempt and error; other lines are kept as they are.
 */
export function normalizeStderr(stderr: string, context: NormalizeContext): string {
  const lines = stderr.split('\n').map((line) => {
    if (!line.startsWith('{"level"')) return line;
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      const parts = [`LOG ${String(entry.level)}`, String(entry.msg)];
      if (entry.attempt !== undefined) parts.push(`attempt=${String(entry.attempt)}`);
      if (entry.error !== undefined) parts.push(`error=${String(entry.error)}`);
      return parts.join(' | ');
    } catch {
      return line;
    }
  });
  return replaceEndpoints(lines.join('\n').replace(DURATION, 'took = <duration>'), context.endpoints);
}

/** The `Error: ...` line etcdctl prints on failure, without the prefix, or undefined. */
export function etcdctlError(stderr: string): string | undefined {
  const line = stderr.split('\n').find((candidate) => candidate.startsWith('Error: '));
  return line?.slice('Error: '.length);
}
