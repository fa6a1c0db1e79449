import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface CreateMetricsOptions {
  /** Prefix of every metric name, e.g. `ward_raft_node_`. */
  readonly prefix: string;
  /** Labels on every series, e.g. `{ member: '1' }`. */
  readonly defaultLabels?: Readonly<Record<string, string>>;
  /** Process metrics (CPU, memory, event loop lag, GC). */
  readonly collectProcessMetrics: boolean;
}

export interface MetricSpec<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
}

/** One Prometheus registry per process, with explicit options and prefixed metric names. */
export class Metrics {
  readonly registry: Registry;
  private readonly prefix: string;

  constructor(options: CreateMetricsOptions) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(options.prefix)) {
      throw new TypeError(`Metrics: prefix ${JSON.stringify(options.prefix)} is not a valid metric name prefix`);
    }
    this.prefix = options.prefix;
    this.registry = new Registry();
    if (options.defaultLabels) this.registry.setDefaultLabels({ ...options.defaultLabels });
    if (options.collectProcessMetrics) collectDefaultMetrics({ register: this.registry, prefix: options.prefix });
  }

  counter<L extends string>(spec: MetricSpec<L>): Counter<L> {
    return new Counter<L>({ ...this.named(spec), registers: [this.registry] });
  }

  /** `collect`, when given, runs at every scrape (a gauge read from state kept elsewhere). */
  gauge<L extends string>(spec: MetricSpec<L> & { readonly collect?: (gauge: Gauge<L>) => void }): Gauge<L> {
    const collect = spec.collect;
    return new Gauge<L>({
      ...this.named(spec),
      registers: [this.registry],
      ...(collect === undefined ? {} : { collect(this: Gauge<L>) { collect(this); } }),
    });
  }

  /** Buckets are required: say what range the histogram measures. */
  histogram<L extends string>(spec: MetricSpec<L> & { readonly buckets: readonly number[] }): Histogram<L> {
    return new Histogram<L>({ ...this.named(spec), buckets: [...spec.buckets], registers: [this.registry] });
  }

  /** The text exposition format for `/metrics`. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private named<L extends string>(spec: MetricSpec<L>): { name: string; help: string; labelNames: L[] } {
    return { name: `${this.prefix}${spec.name}`, help: spec.help, labelNames: [...(spec.labelNames ?? [])] };
  }
}

export function createMetrics(options: CreateMetricsOptions): Metrics {
  return new Metrics(options);
}

/** Latency buckets in seconds from 100 µs to 10 s, for request and fsync durations. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]);
