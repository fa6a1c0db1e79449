/**
 * The `ward-mesh` command line: `ward-mesh <command> [inputs...] [flags]`. Parsing is strict:
 * an unknown flag or a malformed value is a usage error, never a guess.
 */
import { parseArgs } from 'node:util';
import type { OutputFormat } from '../commands/command-result';

export const COMMANDS = ['validate', 'compile', 'explain', 'serve', 'help'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** A workload given on the command line: `--workload ns/name --labels k=v,...`. */
export interface WorkloadArgs {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface ParsedArgs {
  readonly command: CommandName;
  readonly inputs: readonly string[];
  readonly output: OutputFormat | undefined;
  readonly help: boolean;
  readonly namespace: string;
  readonly rootNamespace: string;
  readonly strict: boolean;
  readonly analyze: boolean;
  readonly advice: boolean;
  readonly compat: boolean;
  readonly workload: WorkloadArgs | undefined;
  /** Every flag value as given, for the commands that read more (compile, explain). */
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
}

export type ParseResult = { readonly ok: true; readonly args: ParsedArgs } | { readonly ok: false; readonly message: string };

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
  namespace: { type: 'string', short: 'n' },
  'root-namespace': { type: 'string' },
  strict: { type: 'boolean' },
  analyze: { type: 'boolean' },
  advice: { type: 'boolean' },
  compat: { type: 'boolean' },
  workload: { type: 'string' },
  labels: { type: 'string' },
  ports: { type: 'string' },
  'trust-domain': { type: 'string' },
  'trust-domain-aliases': { type: 'string' },
  'mesh-config': { type: 'string' },
  method: { type: 'string' },
  path: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'source-principal': { type: 'string' },
  'source-ip': { type: 'string' },
  'remote-ip': { type: 'string' },
  'request-principal': { type: 'string' },
  header: { type: 'string', multiple: true },
  sni: { type: 'string' },
  tls: { type: 'string' },
  expect: { type: 'string' },
  'ext-authz': { type: 'string' },
} as const;

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_LABELS = 64;

/** `k=v,k2=v2` → labels; keys must be non-empty, values may be empty. */
export function parseLabels(text: string): Record<string, string> | string {
  const labels: Record<string, string> = {};
  const pairs = text.split(',').filter((pair) => pair.trim() !== '');
  if (pairs.length > MAX_LABELS) return `--labels: at most ${MAX_LABELS} labels`;
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) return `--labels: expected key=value, got ${JSON.stringify(pair)}`;
    labels[pair.slice(0, equals).trim()] = pair.slice(equals + 1).trim();
  }
  return labels;
}

function parseWorkload(workload: string | undefined, labels: string | undefined): WorkloadArgs | undefined | string {
  if (workload === undefined) return labels === undefined ? undefined : '--labels needs --workload ns/name';
  const [namespace, name, extra] = workload.split('/');
  if (namespace === undefined || name === undefined || extra !== undefined || !NAME.test(namespace) || !NAME.test(name)) {
    return `--workload: expected <namespace>/<name> (DNS labels), got ${JSON.stringify(workload)}`;
  }
  const parsed = parseLabels(labels ?? '');
  return typeof parsed === 'string' ? parsed : { namespace, name, labels: parsed };
}

function outputOf(value: string | undefined): OutputFormat | undefined | string {
  if (value === undefined || value === 'text' || value === 'json' || value === 'yaml') return value;
  return `-o/--output: expected text, json or yaml, got ${JSON.stringify(value)}`;
}

/** Parses `argv` (without node and the script). */
export function parseCommandLine(argv: readonly string[]): ParseResult {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const [first, ...inputs] = parsed.positionals;
  const values = parsed.values;
  const command = first === undefined ? 'help' : first;
  if (!COMMANDS.includes(command as CommandName)) return { ok: false, message: `unknown command ${JSON.stringify(command)}` };
  const output = outputOf(values.output);
  if (typeof output === 'string' && !['text', 'json', 'yaml'].includes(output)) return { ok: false, message: output };
  const workload = parseWorkload(values.workload, values.labels);
  if (typeof workload === 'string') return { ok: false, message: workload };
  return {
    ok: true,
    args: {
      command: command as CommandName,
      inputs,
      output: output as OutputFormat | undefined,
      help: values.help ?? false,
      namespace: values.namespace ?? 'default',
      rootNamespace: values['root-namespace'] ?? 'istio-system',
      strict: values.strict ?? false,
      analyze: values.analyze ?? false,
      advice: values.advice ?? false,
      compat: values.compat ?? false,
      workload,
      values,
    },
  };
}
