/**
 * Policy input of `ward-mesh serve --xds`: the files `validate` and `compile` read (a watched
 * directory) or documents posted to the HTTP API. A change is validated exactly as `validate`
 * does; an invalid one is refused with validate's report and the last good snapshot stays served
 * (the whole set is replaced or nothing is: never an empty or partial policy set). Kubernetes
 * `v1 Service` and `v1 Endpoints` documents among the inputs declare the services served to xDS
 * clients (./services.ts), checked the same way.
 */
import { watch, type FSWatcher } from 'node:fs';
import { CLI_INPUT_LIMITS } from '../cli/run-cli';
import { readInputs, type SourceText } from '../cli/read-inputs';
import type { Diagnostic } from '@ward/mesh/istio-api';
import { evaluateValidate, validateText, type ValidateCommandOptions } from '../commands/validate-command';
import { loadPolicyInputs } from '../commands/policy-inputs';
import type { PolicySnapshot } from './ads-server';
import { loadServices, servicesReport } from './services';

export type ApplyOutcome =
  | { readonly accepted: true; readonly snapshot: PolicySnapshot; readonly unchanged: boolean; readonly report: string }
  | { readonly accepted: false; readonly report: string; readonly keptVersion: string };

const VALIDATE_OPTIONS: ValidateCommandOptions = Object.freeze({
  output: 'text',
  strict: false,
  analyze: false,
  advice: false,
  compat: false,
  defaultNamespace: 'default',
  rootNamespace: 'istio-system',
} as ValidateCommandOptions);

/** Holds the last good snapshot and validates every candidate. Versions count accepted changes. */
export class PolicyStore {
  private current: PolicySnapshot;
  private accepted = 0;
  private lastKey = '';
  /** Sources of the accepted snapshot that held at least one resource. */
  private sourcesWithResources = new Set<string>();

  constructor(private readonly defaultNamespace = 'default') {
    this.current = { version: '0', authorizationPolicies: [], peerAuthentications: [], services: [] };
  }

  get snapshot(): PolicySnapshot {
    return this.current;
  }

  /** Validates `sources` (with the read `problems`) and, when valid, makes them the snapshot. */
  apply(sources: readonly SourceText[], problems: readonly Diagnostic[]): ApplyOutcome {
    // An editor or a copy truncates a file before writing it: an empty file that held resources is
    // taken for a write in progress, never for "no policies" (that would open the workload).
    const truncated = sources.filter((s) => s.text.trim() === '' && this.sourcesWithResources.has(s.sourceName));
    if (truncated.length > 0) {
      const report = truncated.map((s) => `${s.sourceName}: empty, but it held policies; refused as a partial write (delete the file, or leave a comment in it, to remove its policies)`).join('\n');
      return { accepted: false, report: `${report}\n`, keptVersion: this.current.version };
    }
    const options = { ...VALIDATE_OPTIONS, defaultNamespace: this.defaultNamespace };
    const evaluation = evaluateValidate(sources, problems, options);
    const report = validateText(evaluation, options);
    if (evaluation.exitCode !== 0) return { accepted: false, report, keptVersion: this.current.version };
    const services = loadServices(sources, this.defaultNamespace);
    if (services.findings.length > 0) return { accepted: false, report: `${report}${servicesReport(services.findings)}`, keptVersion: this.current.version };
    const key = sources.map((s) => `${s.sourceName}\0${s.text}`).join('\0\0');
    if (key === this.lastKey && this.accepted > 0) return { accepted: true, snapshot: this.current, unchanged: true, report };
    const inputs = loadPolicyInputs(sources, problems, this.defaultNamespace);
    this.accepted += 1;
    this.lastKey = key;
    this.current = { version: String(this.accepted), authorizationPolicies: inputs.authorizationPolicies, peerAuthentications: inputs.peerAuthentications, services: services.services };
    this.sourcesWithResources = new Set([
      ...inputs.loaded.filter((l) => l.resource.kind === 'AuthorizationPolicy' || l.resource.kind === 'PeerAuthentication').map((l) => l.origin.sourceName),
      ...services.sourcesWithServices,
    ]);
    return { accepted: true, snapshot: this.current, unchanged: false, report };
  }
}

/** Reads a directory the way `validate dir/` does. */
export async function readPolicyDirectory(directory: string): Promise<{ sources: readonly SourceText[]; problems: readonly Diagnostic[] }> {
  const empty: AsyncIterable<string> = { [Symbol.asyncIterator]: async function* () {} };
  return readInputs([directory], empty, CLI_INPUT_LIMITS);
}

export interface DirectoryWatcher {
  close(): void;
}

/**
 * Calls `onChange` after changes below `directory` settle (`debounceMs` without events), one call
 * at a time; a change during a call schedules one more. `pollMs` re-reads periodically as a
 * safety net for file systems whose events are unreliable.
 */
export function watchPolicyDirectory(directory: string, onChange: () => Promise<void>, options: { debounceMs: number; pollMs: number }): DirectoryWatcher {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let again = false;
  const run = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await onChange();
    } finally {
      running = false;
      if (again) {
        again = false;
        schedule();
      }
    }
  };
  const schedule = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void run();
    }, options.debounceMs);
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(directory, { recursive: true }, schedule);
    watcher.on('error', () => undefined);
  } catch {
    watcher = undefined;
  }
  const poll = setInterval(() => void run(), options.pollMs);
  poll.unref();
  return {
    close() {
      watcher?.close();
      clearInterval(poll);
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
