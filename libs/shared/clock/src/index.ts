export type { Clock } from './clock';
export { ManualClock, systemClock } from './clock';
export type { Rng } from './rng';
export { SeededRng } from './rng';
export { parseGoDuration } from './go-duration';
