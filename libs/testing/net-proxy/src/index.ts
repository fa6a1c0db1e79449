export type { Direction, LinkFault, NetProxy, NetProxyOptions, NetProxyStats, DirectionStats } from './net-proxy';
export { startNetProxy } from './net-proxy';
export { DelayLine } from './delay-line';
