export interface RestartPolicy {
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  readonly stableAfterMs: number;
  readonly maxQuickCrashes: number;
}
export declare const RESTART_POLICY: RestartPolicy;
export declare const REMOVED_MEMBER_TEXT: string;
export type ExitKind = 'stopping' | 'removed' | 'failed-to-start' | 'crash';
export declare function classifyExit(exit: {
  app: string;
  code: number | null;
  signal: string | null;
  saidRemoved: boolean;
  stopping: boolean;
  ready: boolean;
}): ExitKind;
export type RestartDecision = { action: 'restart'; delayMs: number; quickCrashes: number } | { action: 'give-up'; quickCrashes: number };
export declare function nextRestart(quickCrashes: number, uptimeMs: number, policy?: RestartPolicy): RestartDecision;
