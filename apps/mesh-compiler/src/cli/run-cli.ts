/** Dispatches a parsed command line to its command; everything the process prints comes from here. */
import { DEFAULT_LOAD_LIMITS } from '@ward/mesh/istio-api';
import { EXIT } from '../commands/command-result';
import type { CommandResult } from '../commands/command-result';
import { compileOptionsFromFlags, runCompile } from '../commands/compile-command';
import { runExplain, trafficFromFlags } from '../commands/explain-command';
import { runValidate } from '../commands/validate-command';
import { HELP_TEXT } from './help';
import { parseCommandLine } from './parse-args';
import type { ParsedArgs } from './parse-args';
import { readInputs } from './read-inputs';
import type { InputLimits } from './read-inputs';

export interface CliIo {
  readonly stdin: AsyncIterable<Uint8Array | string>;
}

/** Input limits of the CLI. */
export const CLI_INPUT_LIMITS: InputLimits = Object.freeze({
  maxFilesCount: 1_000,
  maxFileBytes: DEFAULT_LOAD_LIMITS.maxSourceBytes,
  maxDirectoryDepthCount: 16,
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

async function compile(args: ParsedArgs, io: CliIo): Promise<CommandResult> {
  if (args.inputs.length === 0) return usage('compile needs at least one input (a file, a directory or - for stdin)');
  if (args.workload === undefined) return usage('compile needs --workload <namespace>/<name> (and usually --labels k=v,...)');
  if (args.output === 'text') return usage('compile writes yaml or json (-o yaml|json)');
  const options = compileOptionsFromFlags(args.workload, args.values, args.output ?? 'yaml', args.namespace);
  if (typeof options === 'string') return usage(options);
  const { sources, problems } = await readInputs(args.inputs, io.stdin, CLI_INPUT_LIMITS);
  return runCompile(sources, problems, options);
}

async function explain(args: ParsedArgs, io: CliIo): Promise<CommandResult> {
  if (args.inputs.length === 0) return usage('explain needs at least one input (a file, a directory or - for stdin)');
  if (args.workload === undefined) return usage('explain needs --workload <namespace>/<name> (and usually --labels k=v,...)');
  const options = compileOptionsFromFlags(args.workload, args.values, args.output ?? 'text', args.namespace);
  if (typeof options === 'string') return usage(options);
  const traffic = trafficFromFlags(args.values, options.workload);
  if (typeof traffic === 'string') return usage(traffic);
  const { sources, problems } = await readInputs(args.inputs, io.stdin, CLI_INPUT_LIMITS);
  return runExplain(sources, problems, { ...options, traffic });
}

/** Runs `ward-mesh` with `argv` (without node and the script path). `serve` is handled by main. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<CommandResult> {
  const parsed = parseCommandLine(argv);
  if (!parsed.ok) return usage(parsed.message);
  const args = parsed.args;
  if (args.help || args.command === 'help') return { stdout: HELP_TEXT, stderr: '', exitCode: EXIT.ok };
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
