// Scripted membership scenarios (testdata/*.txt, etcd-io/raft datadriven style): every command's
// output must match the script. RAFT_SCRIPT_REWRITE=1 rewrites the expected outputs.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ScriptRunner, parseScript, renderScript } from './test/script';

const dir = fileURLToPath(new URL('./testdata/', import.meta.url));
const rewrite = process.env['RAFT_SCRIPT_REWRITE'] === '1';

describe('membership scenarios', () => {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.txt')).sort()) {
    it(file, () => {
      const text = readFileSync(dir + file, 'utf8');
      const runner = new ScriptRunner();
      const actual: string[] = [];
      for (const block of parseScript(text)) {
        const out = runner.run(block.command);
        actual.push(out);
        if (!rewrite) expect(`${file}:${block.line} ${block.command}\n${out}`).toBe(`${file}:${block.line} ${block.command}\n${block.expected}`);
      }
      if (rewrite) writeFileSync(dir + file, renderScript(text, actual));
    });
  }
});
