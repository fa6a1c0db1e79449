export { LATENCY_BUCKETS_SECONDS, Metrics, createMetrics, type CreateMetricsOptions, type MetricSpec } from './registry';
