/** What a command produces: text for stdout and stderr, and the process exit code. */
export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/** Exit codes of `ward-mesh`. */
export const EXIT = Object.freeze({
  /** Everything valid (warnings allowed, as istioctl). */
  ok: 0,
  /** Invalid input: errors, unreadable input, or warnings under `--strict`. */
  failed: 1,
  /** Bad command line. */
  usage: 2,
  /** A bug in ward-mesh (reported as one line, never a stack trace on stdout). */
  internal: 70,
});

export type OutputFormat = 'text' | 'json' | 'yaml';
