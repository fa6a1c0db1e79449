/**
 * The HTTP function: `POST /validate`, `/compile` and `/explain` on the platform's fastify
 * server (health, readiness, metrics, body limit, one error handler), with JSON-schema
 * validated bodies. Answers are JSON; an invalid policy is a 200 answer with `valid: false`,
 * a malformed request is a 400, an oversized one a 413.
 */
import { createHttpServer } from '@ward/platform/http-server';
import type { Logger } from '@ward/platform/logging';
import type { Metrics } from '@ward/platform/metrics';
import type { FastifyInstance } from 'fastify';
import { PORT_PROTOCOLS, toGoYaml } from '@ward/mesh/compiler';
import type { PortProtocol, Workload } from '@ward/mesh/compiler';
import { evaluateCompile } from '../commands/compile-command';
import { evaluateExplain, explanationText } from '../commands/explain-command';
import { evaluateValidate, validateReport, validateText } from '../commands/validate-command';
import type { MeshCompilerConfig } from '../config';
import { compileBodySchema, explainBodySchema, validateBodySchema } from './validate-schema';
import type { CompileBody, ExplainBody, ValidateBody, WorkloadBody } from './validate-schema';

export interface MeshCompilerHttpOptions {
  readonly config: Pick<MeshCompilerConfig, 'bodyLimitBytes' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'maxInputsCount'>;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

function sourcesOf(body: { inputs: readonly { name?: string; content: string }[] }) {
  return body.inputs.map((input, index) => ({ sourceName: input.name ?? `input-${index}`, text: input.content }));
}

function registerValidate(app: FastifyInstance, options: MeshCompilerHttpOptions, count: (route: string, outcome: string) => void): void {
  app.post<{ Body: ValidateBody }>('/validate', { schema: { body: validateBodySchema(options.config.maxInputsCount) } }, async (request) => {
    const body = request.body;
    const commandOptions = {
      output: 'json' as const,
      strict: body.strict ?? false,
      analyze: body.analyze ?? false,
      advice: body.advice ?? false,
      compat: body.compat ?? false,
      defaultNamespace: body.namespace ?? 'default',
      rootNamespace: body.rootNamespace ?? 'istio-system',
    };
    const evaluation = evaluateValidate(sourcesOf(body), [], commandOptions);
    count('validate', evaluation.exitCode === 0 ? 'valid' : 'invalid');
    return { ...validateReport(evaluation), text: validateText(evaluation, commandOptions) };
  });
}

/** The mesh part of a compile or explain body: `mesh` overrides the `meshConfig` text. */
function meshOptionsOf(body: Pick<CompileBody, 'mesh' | 'meshConfig'>) {
  return {
    mesh: { ...body.mesh, ...(body.mesh?.trustDomainAliases === undefined ? {} : { trustDomainAliases: [...body.mesh.trustDomainAliases] }) },
    ...(body.meshConfig === undefined ? {} : { meshConfig: { sourceName: 'meshConfig', text: body.meshConfig } }),
  };
}

/** The workload of a request body (ports without a protocol sniff, as in the CLI). */
export function workloadOf(body: WorkloadBody): Workload {
  return {
    namespace: body.namespace,
    ...(body.name === undefined ? {} : { name: body.name }),
    labels: body.labels ?? {},
    ports: (body.ports ?? []).map((port) => ({ port: port.port, protocol: (port.protocol ?? 'UNKNOWN') as PortProtocol })),
  };
}

function registerCompile(app: FastifyInstance, options: MeshCompilerHttpOptions, count: (route: string, outcome: string) => void): void {
  const schema = { body: compileBodySchema(options.config.maxInputsCount, PORT_PROTOCOLS) };
  app.post<{ Body: CompileBody }>('/compile', { schema }, async (request) => {
    const body = request.body;
    const evaluation = evaluateCompile(sourcesOf(body), [], {
      output: 'json',
      workload: workloadOf(body.workload),
      ...meshOptionsOf(body),
      defaultNamespace: body.namespace ?? 'default',
    });
    count('compile', evaluation.exitCode === 0 ? 'compiled' : evaluation.document === undefined ? 'invalid' : 'fail-closed');
    const yaml = body.output === 'yaml' && evaluation.document !== undefined ? { yaml: toGoYaml(evaluation.document) } : {};
    return { exitCode: evaluation.exitCode, compiled: evaluation.document !== undefined, ...(evaluation.document ?? { diagnostics: evaluation.findings }), ...yaml };
  });
}

function registerExplain(app: FastifyInstance, options: MeshCompilerHttpOptions, count: (route: string, outcome: string) => void): void {
  const schema = { body: explainBodySchema(options.config.maxInputsCount, PORT_PROTOCOLS) };
  app.post<{ Body: ExplainBody }>('/explain', { schema }, async (request) => {
    const body = request.body;
    const evaluation = evaluateExplain(sourcesOf(body), [], {
      output: 'json',
      workload: workloadOf(body.workload),
      ...meshOptionsOf(body),
      defaultNamespace: body.namespace ?? 'default',
      traffic: body.traffic,
      ...(body.expect !== undefined ? { expect: body.expect } : {}),
    });
    count('explain', evaluation.result === undefined ? 'not-explained' : evaluation.result.outcome);
    const text = body.output === 'text' && evaluation.result !== undefined ? { text: explanationText(evaluation.traffic, evaluation.result) } : {};
    return {
      exitCode: evaluation.exitCode,
      explained: evaluation.result !== undefined,
      ...(evaluation.failure === undefined ? {} : { failure: evaluation.failure }),
      traffic: evaluation.traffic,
      ...(evaluation.result === undefined ? {} : { result: evaluation.result }),
      ...(evaluation.expectation === undefined ? {} : { expectation: evaluation.expectation }),
      diagnostics: evaluation.findings,
      ...text,
    };
  });
}

/** Builds the HTTP function (not listening yet). */
export function createMeshCompilerHttp(options: MeshCompilerHttpOptions): FastifyInstance {
  const app = createHttpServer({
    logger: options.logger,
    metrics: options.metrics,
    bodyLimitBytes: options.config.bodyLimitBytes,
    requestTimeoutMs: options.config.requestTimeoutMs,
    keepAliveTimeoutMs: options.config.keepAliveTimeoutMs,
    readiness: () => true,
  });
  const requests = options.metrics.counter({ name: 'requests_total', help: 'HTTP function requests by route and outcome.', labelNames: ['route', 'outcome'] });
  const count = (route: string, outcome: string) => requests.inc({ route, outcome });
  registerValidate(app, options, count);
  registerCompile(app, options, count);
  registerExplain(app, options, count);
  return app;
}
