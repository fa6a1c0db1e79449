// The checker against histories with known verdicts (Porcupine's test data, testdata/PROVENANCE.md).
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkLinearizability } from './check';
import { formatCheckResult } from './format-result';
import { appendKvModel } from './models/append-kv';
import { registerModel } from './models/register';
import { singlePartition } from './models/single-partition';
import { parseEdnKvHistory } from './parsers/edn-kv-history';
import { parseJepsenRegisterLog } from './parsers/jepsen-register-log';

const testdata = new URL('../testdata/', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, testdata), 'utf8');

/** A finite budget: every fixture must be decided well within it, never `unknown`. */
const BUDGET = { maxSteps: 5_000_000 };

function expectations(path: string): [file: string, verdict: 'ok' | 'illegal'][] {
  return read(path)
    .trim()
    .split('\n')
    .map((line): [string, 'ok' | 'illegal'] => {
      const [file, verdict] = line.trim().split(/\s+/);
      if (verdict !== 'linearizable' && verdict !== 'not-linearizable') throw new Error(`bad EXPECTED line: ${line}`);
      return [file as string, verdict === 'linearizable' ? 'ok' : 'illegal'];
    })
    .sort(([a], [b]) => a.localeCompare(b));
}

describe('jepsen etcd register histories', () => {
  const expected = expectations('jepsen-etcd/EXPECTED.txt');

  it('lists 102 histories, 23 linearizable and 79 not, covering every non-empty log', () => {
    expect(expected).toHaveLength(102);
    expect(expected.filter(([, verdict]) => verdict === 'ok')).toHaveLength(23);
    const listed = new Set(expected.map(([file]) => file));
    const logs = readdirSync(new URL('jepsen-etcd/', testdata)).filter((name) => name.endsWith('.log'));
    const unlisted = logs.filter((name) => !listed.has(name));
    expect(unlisted).toEqual(['etcd_095.log']);
    expect(read('jepsen-etcd/etcd_095.log')).toBe('');
  });

  it.each(expected)('%s is %s', (file, verdict) => {
    const history = parseJepsenRegisterLog(read(`jepsen-etcd/${file}`));
    const result = checkLinearizability(registerModel, history, { budget: BUDGET });
    expect(result.verdict, formatCheckResult(registerModel, history, result)).toBe(verdict);
  });

  it.each(expected)('%s is %s also when :fail :cas means "compare failed"', (file, verdict) => {
    const history = parseJepsenRegisterLog(read(`jepsen-etcd/${file}`), { failedCas: 'compare-failed' });
    expect(checkLinearizability(registerModel, history, { budget: BUDGET }).verdict).toBe(verdict);
  });
});

describe('kv get/put/append histories', () => {
  const expected = expectations('kv/EXPECTED.txt');

  it('lists the six histories c01, c10 and c50, ok and bad', () => {
    expect(expected.map(([file]) => file)).toEqual([
      'c01-bad.txt',
      'c01-ok.txt',
      'c10-bad.txt',
      'c10-ok.txt',
      'c50-bad.txt',
      'c50-ok.txt',
    ]);
  });

  it.each(expected)('%s is %s (partitioned by key)', (file, verdict) => {
    const history = parseEdnKvHistory(read(`kv/${file}`));
    const result = checkLinearizability(appendKvModel, history, { budget: BUDGET });
    expect(result.verdict, formatCheckResult(appendKvModel, history, result)).toBe(verdict);
    expect(result.partitions.length).toBeGreaterThan(1);
  });

  // One partition holding every key: the verdict must not depend on partitioning.
  it.each(expected.filter(([file]) => !file.startsWith('c50')))('%s is %s (single partition)', (file, verdict) => {
    const history = parseEdnKvHistory(read(`kv/${file}`));
    const model = singlePartition(appendKvModel);
    const result = checkLinearizability(model, history, { budget: BUDGET });
    expect(result.verdict).toBe(verdict);
    expect(result.partitions).toHaveLength(1);
  });
});
