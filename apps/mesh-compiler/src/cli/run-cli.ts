/** Dispatches a parsed command line to its command; everything the process prints comes from here. */
import { DEFAULT_LOAD_LIMITS } from '@ward/mesh/istio-api';
import type { Diagnostic } from '@ward/mesh/istio-api';
import { EXIT } from '../commands/command-result';
import type { CommandResult } from '../commands/command-result';
import { compileOptionsFromFlags, runCompile } from '../commands/compile-command';
import { EXPECTATIONS, runExplain, trafficFromFlags } from '../commands/explain-command';
import type { Expectation } from '../commands/explain-command';
import { runValidate } from '../commands/validate-command';
import { HELP_TEXT } from './help';
import { parseCommandLine } from './parse-args';
import type { ParsedArgs } from './parse-args';
import { readInputs, readSingleFile } from './read-inputs';
import type { InputLimits, SourceText } from './read-inputs';

export interface CliIo {
  readonly stdin: AsyncIterable<Uint8Array | string>;
}

/** Input limits of the CLI. */
export const CLI_INPUT_LIMITS: InputLimits = Object.freeze({
  maxFilesCount: 1_000,
  maxFileBytes: DEFAULT_LOAD_LIMITS.maxSourceBytes,
  maxDirectoryDepthCount: 16,
  maxTotalBytes: 64 * 1024 * 1024,
});

function usage(message: string): CommandResult {
  return { stdout: '', stderr: `ward-mesh: ${message}\nRun "ward-mesh help" for usage.\n`, exitCode: EXIT.usage };
}

async function validate(args: ParsedArgs, io: CliIo): Promise<CommandResult> {
  if (args.inputs.length === 0) return usage('validate needs at least one input (a file, a directory or - for stdin)');
  const { sources, problems } = await readInputs(args.inputs, io.stdin, CLI_INPUT_LIMITS);
  return runValidate(sources, problems, {
    output: args.output ?? 'text',
    strict: args.strict,
    analyze: args.analyze,
    advice: args.advice,
    compat: args.compat,
    defaultNamespace: args.namespace,
    rootNamespace: args.rootNamespace,
  });
}

/** The `--mesh-config` file, read; a problem when it cannot be read; a usage message for `-`. */
async function meshConfigOf(args: ParsedArgs): Promise<{ meshConfig?: SourceText; problems: Diagnostic[] } | string> {
  const path = args.values['mesh-config'];
  if (typeof path !== 'string') return { problems: [] };
  if (path === '' || path === '-') return '--mesh-config needs a file (MeshConfig YAML, the istio ConfigMap or an IstioOperator)';
  const read = await readSingleFile(path, CLI_INPUT_LIMITS.maxFileBytes);
  return 'text' in read ? { meshConfig: read, problems: [] } : { problems: [read] };
}

async function compile(args: ParsedArgs, io: CliIo): Promise<CommandResult> {
  if (args.inputs.length === 0) return usage('compile needs at least one input (a file, a directory or - for stdin)');
  if (args.workload === undefined) return usage('compile needs --workload <namespace>/<name> (and usually --labels k=v,...)');
  if (args.output === 'text') return usage('compile writes yaml or json (-o yaml|json)');
  const mesh = await meshConfigOf(args);
  if (typeof mesh === 'string') return usage(mesh);
  const options = compileOptionsFromFlags(args.workload, args.values, args.output ?? 'yaml', args.namespace, mesh.meshConfig);
  if (typeof options === 'string') return usage(options);
  const { sources, problems } = await readInputs(args.inputs, io.stdin, CLI_INPUT_LIMITS);
  return runCompile(sources, [...mesh.problems, ...problems], options);
}

async function explain(args: ParsedArgs, io: CliIo): Promise<CommandResult> {
  if (args.inputs.length === 0) return usage('explain needs at least one input (a file, a directory or - for stdin)');
  if (args.workload === undefined) return usage('explain needs --workload <namespace>/<name> (and usually --labels k=v,...)');
  const mesh = await meshConfigOf(args);
  if (typeof mesh === 'string') return usage(mesh);
  const options = compileOptionsFromFlags(args.workload, args.values, args.output ?? 'text', args.namespace, mesh.meshConfig);
  if (typeof options === 'string') return usage(options);
  const traffic = trafficFromFlags(args.values, options.workload);
  if (typeof traffic === 'string') return usage(traffic);
  const expected = args.values['expect'];
  if (expected !== undefined && !EXPECTATIONS.includes(expected as Expectation)) return usage(`--expect: expected allow, deny or reset, got ${JSON.stringify(expected)}`);
  const { sources, problems } = await readInputs(args.inputs, io.stdin, CLI_INPUT_LIMITS);
  return runExplain(sources, [...mesh.problems, ...problems], { ...options, traffic, ...(expected !== undefined ? { expect: expected as Expectation } : {}) });
}

/** Flags that only one command reads, given to another: a usage error rather than ignored. */
function misplacedFlag(args: ParsedArgs): string | undefined {
  for (const flag of ['expect', 'ext-authz']) if (args.values[flag] !== undefined && args.command !== 'explain') return `--${flag} is a flag of explain`;
  if (args.values['mesh-config'] !== undefined && args.command !== 'compile' && args.command !== 'explain') return '--mesh-config is a flag of compile and explain';
  return undefined;
}

/** Runs `ward-mesh` with `argv` (without node and the script path). `serve` is handled by main. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<CommandResult> {
  const parsed = parseCommandLine(argv);
  if (!parsed.ok) return usage(parsed.message);
  const args = parsed.args;
  if (args.help || args.command === 'help') return { stdout: HELP_TEXT, stderr: '', exitCode: EXIT.ok };
  const misplaced = misplacedFlag(args);
  if (misplaced !== undefined) return usage(misplaced);
  switch (args.command) {
    case 'validate':
      return validate(args, io);
    case 'compile':
      return compile(args, io);
    case 'explain':
      return explain(args, io);
    case 'serve':
      return usage('serve is started by the ward-mesh executable, not by runCli');
  }
}
