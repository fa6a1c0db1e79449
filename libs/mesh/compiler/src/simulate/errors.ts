import { CodedError } from '@ward/shared/errors';

/** Codes of simulator failures: configuration the simulator cannot evaluate faithfully. */
export type SimulatorErrorCode = 'ERR_MESH_SIM_UNSUPPORTED_MATCHER' | 'ERR_MESH_SIM_INVALID_TRAFFIC';

/**
 * The simulator met something it cannot evaluate like Envoy would (for example a regex feature
 * RE2 lacks, or a matcher type istiod never emits). It refuses rather than guess.
 */
export class SimulatorError extends CodedError<SimulatorErrorCode> {
  constructor(
    code: SimulatorErrorCode,
    message: string,
    readonly detail: string,
  ) {
    super(code, message);
  }
}
