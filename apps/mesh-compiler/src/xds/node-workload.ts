/**
 * The workload a proxyless gRPC node stands for, from what istio-agent's gRPC bootstrap puts in
 * `node`: `id` (`sidecar~<ip>~<pod>.<ns>~<ns>.svc.<domain>`) and the metadata keys `NAMESPACE`,
 * `LABELS` (a struct of strings) and `POD_PORTS` (the container ports, a JSON string such as
 * `[{"name":"grpc","containerPort":50051,"protocol":"TCP"}]`). Without `POD_PORTS` every port is
 * served: ward has no service registry to ask.
 */
import type { Workload, WorkloadPort } from '@ward/mesh/compiler';

/**
 * google.protobuf.Value as protobufjs decodes it: the well-known types keep protobufjs's
 * camelCase names (`stringValue`, ...) and the oneof `kind` names the member that is set.
 */
interface ProtoValue {
  readonly kind?: string;
  readonly numberValue?: number;
  readonly stringValue?: string;
  readonly boolValue?: boolean;
  readonly structValue?: ProtoStruct;
  readonly listValue?: { readonly values?: readonly ProtoValue[] };
}
interface ProtoStruct {
  readonly fields?: Readonly<Record<string, ProtoValue>>;
}

/** The parts of envoy.config.core.v3.Node ward reads. */
export interface DecodedNode {
  readonly id?: string;
  readonly cluster?: string;
  readonly metadata?: ProtoStruct | null;
  readonly user_agent_name?: string;
}

const MAX_STRUCT_DEPTH = 16;

/** A Struct → plain JSON (depth-limited; deeper values become null). */
export function structToJson(struct: ProtoStruct | null | undefined, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(struct?.fields ?? {})) out[key] = valueToJson(value, depth + 1);
  return out;
}

function valueToJson(value: ProtoValue, depth: number): unknown {
  if (depth > MAX_STRUCT_DEPTH) return null;
  switch (value.kind) {
    case 'stringValue':
      return value.stringValue;
    case 'numberValue':
      return value.numberValue;
    case 'boolValue':
      return value.boolValue;
    case 'structValue':
      return structToJson(value.structValue, depth);
    case 'listValue':
      return (value.listValue?.values ?? []).map((v) => valueToJson(v, depth + 1));
    default:
      return null;
  }
}

const MAX_PORTS = 1024;

function podPorts(text: unknown): WorkloadPort[] {
  if (typeof text !== 'string' || text.length > 65_536) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const ports: WorkloadPort[] = [];
  for (const entry of parsed.slice(0, MAX_PORTS)) {
    const port = (entry as { containerPort?: unknown } | null)?.containerPort;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) continue;
    if (ports.some((p) => p.port === port)) continue;
    const name = (entry as { name?: unknown }).name;
    ports.push({ port, protocol: 'GRPC', ...(typeof name === 'string' ? { name } : {}) });
  }
  return ports;
}

/** The workload of a node; `undefined` fields in the node fall back to istio-agent's id format, then `default`. */
export function workloadOfNode(node: DecodedNode): Workload & { readonly name: string } {
  const metadata = structToJson(node.metadata ?? undefined);
  const idParts = (node.id ?? '').split('~');
  const podAndNamespace = idParts[2] ?? '';
  const dot = podAndNamespace.indexOf('.');
  const idNamespace = dot > 0 ? podAndNamespace.slice(dot + 1) : undefined;
  const namespace = typeof metadata['NAMESPACE'] === 'string' && metadata['NAMESPACE'] !== '' ? metadata['NAMESPACE'] : idNamespace !== undefined && idNamespace !== '' ? idNamespace : 'default';
  const labels: Record<string, string> = {};
  const rawLabels = metadata['LABELS'];
  if (typeof rawLabels === 'object' && rawLabels !== null && !Array.isArray(rawLabels)) {
    for (const [key, value] of Object.entries(rawLabels)) if (typeof value === 'string') labels[key] = value;
  }
  const name = dot > 0 ? podAndNamespace.slice(0, dot) : podAndNamespace !== '' ? podAndNamespace : (node.id ?? '');
  return { name, namespace, labels, ports: podPorts(metadata['POD_PORTS']) };
}
