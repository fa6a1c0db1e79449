import { createMetrics, type Metrics } from '@ward/platform/metrics';

export interface GatewayMetrics {
  readonly registry: Metrics;
  /** Sets the number of open client Watch streams. */
  setWatchStreams(count: number): void;
}

/** The gateway's Prometheus registry (`ward_gateway_*`; gRPC call counts come from the server). */
export function createGatewayMetrics(collectProcessMetrics: boolean): GatewayMetrics {
  const registry = createMetrics({ prefix: 'ward_gateway_', collectProcessMetrics });
  const watchStreams = registry.gauge({ name: 'watch_streams', help: 'client Watch streams open' });
  return { registry, setWatchStreams: (count) => watchStreams.set(count) };
}
