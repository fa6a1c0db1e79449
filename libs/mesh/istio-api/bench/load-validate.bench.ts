/**
 * Loading and validation throughput: N generated AuthorizationPolicies (a mix of sources,
 * operations and conditions) in one multi-document input, loaded with positions and validated.
 * Prints a table; not a pass/fail test. Run: npx nx run mesh-istio-api:bench
 */
import { performance } from 'node:perf_hooks';
import { analyzeResources, loadResources, validateResources } from '../src/index';

function policy(index: number): string {
  return `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: policy-${index}
  namespace: ns-${index % 50}
spec:
  action: ${index % 3 === 0 ? 'DENY' : 'ALLOW'}
  selector:
    matchLabels: {app: app-${index % 100}}
  rules:
  - from:
    - source:
        principals: ["cluster.local/ns/ns-${index % 50}/sa/sa-${index}"]
        ipBlocks: ["10.${index % 256}.0.0/16"]
    to:
    - operation:
        methods: ["GET", "POST"]
        paths: ["/api/v1/*", "/items/{*}/detail"]
        ports: ["8080"]
    when:
    - key: request.headers[x-tenant]
      values: ["tenant-${index}"]
  - to:
    - operation: {notPaths: ["/healthz"]}
`;
}

function measure(count: number, repetitions: number): string[] {
  const text = Array.from({ length: count }, (_, i) => policy(i)).join('---\n');
  const limits = { maxDocuments: count, maxSourceBytes: text.length * 2 };
  let loadMs = 0;
  let validateMs = 0;
  let analyzeMs = 0;
  for (let round = 0; round < repetitions; round++) {
    const t0 = performance.now();
    const loaded = loadResources(text, { sourceName: 'bench.yaml', limits });
    const t1 = performance.now();
    validateResources(loaded.resources);
    const t2 = performance.now();
    analyzeResources(loaded.resources);
    const t3 = performance.now();
    loadMs += t1 - t0;
    validateMs += t2 - t1;
    analyzeMs += t3 - t2;
  }
  const perPolicyUs = (ms: number) => ((ms / repetitions / count) * 1000).toFixed(1);
  return [
    String(count),
    `${(text.length / 1024).toFixed(0)} KiB`,
    (loadMs / repetitions).toFixed(1),
    perPolicyUs(loadMs),
    (validateMs / repetitions).toFixed(1),
    perPolicyUs(validateMs),
    (analyzeMs / repetitions).toFixed(1),
  ];
}

const header = ['policies', 'input', 'load ms', 'load µs/policy', 'validate ms', 'validate µs/policy', 'analyze ms'];
const rows = [measure(100, 10), measure(1_000, 5), measure(5_000, 2)];
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
const line = (cells: string[]) => cells.map((cell, column) => cell.padStart(widths[column] ?? 0)).join('  ');
console.log(line(header));
for (const row of rows) console.log(line(row));
console.log('\n(indicative: a shared 2-core machine)');
