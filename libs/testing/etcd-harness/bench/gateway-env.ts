// BENCH_GATEWAY_ENV (`NAME=value,...`): GATEWAY_* settings the benches pass to ward's gateway,
// for A/B runs of one setting.
export function benchGatewayEnv(text = process.env.BENCH_GATEWAY_ENV ?? ''): Record<string, string> {
  return envPairs(text);
}

/** BENCH_NODE_ENV (`NAME=value,...`): RAFT_NODE_* settings the page bench passes to ward's members (A/B runs). */
export function benchNodeEnv(text = process.env.BENCH_NODE_ENV ?? ''): Record<string, string> {
  return envPairs(text);
}

function envPairs(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

/** BENCH_NODE_ARGS (space-separated): Node.js options for every ward process, e.g. `--import ./tools/heap-sampling.mjs`. */
export function benchNodeArgs(text = process.env.BENCH_NODE_ARGS ?? ''): string[] {
  return text.split(' ').filter((arg) => arg !== '');
}
