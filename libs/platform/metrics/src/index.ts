export { LATENCY_BUCKETS_SECONDS, Metrics, createMetrics, type CreateMetricsOptions, type MetricSpec } from './registry';
export { EVENT_LOOP_PROBE_RESOLUTION_MS, watchEventLoopStalls, type EventLoopStalls } from './event-loop-stalls';
