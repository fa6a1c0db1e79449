/**
 * JSON schemas of the HTTP function's request bodies (fastify validates them before the handler).
 * fastify's default Ajv options remove properties that `additionalProperties: false` forbids
 * instead of rejecting them, so unknown properties are refused with `additionalProperties: NONE`
 * (a schema nothing satisfies). Scalars follow fastify's default type coercion.
 */
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
