/**
 * JSON schemas of the HTTP function's request bodies (fastify validates them before the handler).
 * fastify's default Ajv options remove properties that `additionalProperties: false` forbids
 * instead of rejecting them, so unknown properties are refused with `additionalProperties: NONE`
 * (a schema nothing satisfies). Scalars follow fastify's default type coercion.
 */
import type { SimulatedTraffic } from '@ward/mesh/compiler';
import { DEFAULT_LOAD_LIMITS } from '@ward/mesh/istio-api';

/** Matches nothing: an additional property fails validation instead of being dropped. */
const NONE = { not: {} } as const;

const NAMESPACE = { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 } as const;

/** One input document source: a name for messages and its YAML/JSON text. */
export function inputsSchema(maxInputsCount: number) {
  return {
    type: 'array',
    minItems: 1,
    maxItems: maxInputsCount,
    items: {
      type: 'object',
      additionalProperties: NONE,
      required: ['content'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[^\\u0000-\\u001f]+$' },
        // Characters, not bytes: the loader enforces the byte limit with a located diagnostic.
        content: { type: 'string', maxLength: DEFAULT_LOAD_LIMITS.maxSourceBytes },
      },
    },
  } as const;
}

export function validateBodySchema(maxInputsCount: number) {
  return {
    type: 'object',
    additionalProperties: NONE,
    required: ['inputs'],
    properties: {
      inputs: inputsSchema(maxInputsCount),
      strict: { type: 'boolean' },
      analyze: { type: 'boolean' },
      advice: { type: 'boolean' },
      compat: { type: 'boolean' },
      namespace: NAMESPACE,
      rootNamespace: NAMESPACE,
    },
  } as const;
}

export interface InputBody {
  readonly name?: string;
  readonly content: string;
}

export interface ValidateBody {
  readonly inputs: readonly InputBody[];
  readonly strict?: boolean;
  readonly analyze?: boolean;
  readonly advice?: boolean;
  readonly compat?: boolean;
  readonly namespace?: string;
  readonly rootNamespace?: string;
}

/** `{namespace, name?, labels?, ports?}`: the workload compile and explain work on. */
export function workloadSchema(protocols: readonly string[]) {
  return {
    type: 'object',
    additionalProperties: NONE,
    required: ['namespace'],
    properties: {
      namespace: NAMESPACE,
      name: { type: 'string', maxLength: 253 },
      labels: { type: 'object', maxProperties: 64, additionalProperties: { type: 'string', maxLength: 63 } },
      ports: {
        type: 'array',
        maxItems: 256,
        items: {
          type: 'object',
          additionalProperties: NONE,
          required: ['port'],
          properties: { port: { type: 'integer', minimum: 1, maximum: 65_535 }, protocol: { type: 'string', enum: [...protocols] } },
        },
      },
    },
  } as const;
}

const MESH_SCHEMA = {
  type: 'object',
  additionalProperties: NONE,
  properties: {
    rootNamespace: NAMESPACE,
    trustDomain: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[^/]+$' },
    trustDomainAliases: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[^/]+$' } },
  },
} as const;

export function compileBodySchema(maxInputsCount: number, protocols: readonly string[]) {
  return {
    type: 'object',
    additionalProperties: NONE,
    required: ['inputs', 'workload'],
    properties: {
      inputs: inputsSchema(maxInputsCount),
      workload: workloadSchema(protocols),
      mesh: MESH_SCHEMA,
      // MeshConfig YAML (or the istio ConfigMap / an IstioOperator), as `--mesh-config` reads it.
      meshConfig: { type: 'string', maxLength: DEFAULT_LOAD_LIMITS.maxSourceBytes },
      namespace: NAMESPACE,
      output: { type: 'string', enum: ['json', 'yaml'] },
    },
  } as const;
}

export interface WorkloadBody {
  readonly namespace: string;
  readonly name?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly ports?: readonly { readonly port: number; readonly protocol?: string }[];
}

export interface CompileBody {
  readonly inputs: readonly InputBody[];
  readonly workload: WorkloadBody;
  readonly mesh?: { readonly rootNamespace?: string; readonly trustDomain?: string; readonly trustDomainAliases?: readonly string[] };
  readonly meshConfig?: string;
  readonly namespace?: string;
  readonly output?: 'json' | 'yaml';
}

export interface ExplainBody extends Omit<CompileBody, 'output'> {
  readonly traffic: SimulatedTraffic;
  readonly output?: 'json' | 'text';
  /** `exitCode` 1 unless the decision is this one. */
  readonly expect?: 'allow' | 'deny' | 'reset';
}

const SHORT_TEXT = { type: 'string', maxLength: 4096 } as const;

/** One simulated request or connection (the simulator's `SimulatedTraffic`). */
export const TRAFFIC_SCHEMA = {
  type: 'object',
  additionalProperties: NONE,
  required: ['port', 'transport'],
  properties: {
    port: { type: 'integer', minimum: 1, maximum: 65_535 },
    transport: { type: 'string', enum: ['mtls', 'tls', 'plaintext'] },
    sourcePrincipal: SHORT_TEXT,
    sourceIp: { type: 'string', maxLength: 64 },
    remoteIp: { type: 'string', maxLength: 64 },
    destinationIp: { type: 'string', maxLength: 64 },
    sni: { type: 'string', maxLength: 253 },
    extAuthz: { type: 'string', enum: ['allow', 'deny'] },
    http: {
      type: 'object',
      additionalProperties: NONE,
      required: ['method', 'path', 'host'],
      properties: {
        method: { type: 'string', minLength: 1, maxLength: 32 },
        path: { type: 'string', pattern: '^/', maxLength: 8192 },
        host: { type: 'string', maxLength: 1024 },
        headers: { type: 'object', maxProperties: 64, additionalProperties: SHORT_TEXT },
        requestPrincipal: SHORT_TEXT,
        version: { type: 'string', enum: ['http/1.1', 'h2'] },
      },
    },
  },
} as const;

export function explainBodySchema(maxInputsCount: number, protocols: readonly string[]) {
  const compile = compileBodySchema(maxInputsCount, protocols);
  return {
    ...compile,
    required: ['inputs', 'workload', 'traffic'],
    properties: { ...compile.properties, traffic: TRAFFIC_SCHEMA, output: { type: 'string', enum: ['json', 'text'] }, expect: { type: 'string', enum: ['allow', 'deny', 'reset'] } },
  } as const;
}
