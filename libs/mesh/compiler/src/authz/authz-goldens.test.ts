// istiod's authz builder goldens (pilot/pkg/security/authz/builder/testdata), one test per output
// file, compared byte for byte. Cases, proxy and mesh configs mirror istiod's builder_test.go.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILDER_DIR, GOLDEN_CASES, buildGoldenCase } from '../../test/golden-cases';

for (const dir of ['http', 'tcp'] as const) {
  describe(`istiod authz builder goldens: ${dir}`, () => {
    for (const testCase of GOLDEN_CASES[dir]) {
      const outputs = (): string[] => buildGoldenCase(testCase, dir);
      it(`${testCase.name}: builds ${testCase.want.length} filter(s)`, () => {
        expect(outputs().length).toBe(testCase.want.length);
      });
      testCase.want.forEach((file, index) => {
        const passes = dir === 'http' ? [file, `extended-${file}`] : [file];
        for (const wantFile of passes) {
          it(`${testCase.name}: ${wantFile} byte for byte`, () => {
            const want = readFileSync(join(BUILDER_DIR, dir, wantFile), 'utf8');
            expect(outputs()[index]).toBe(want);
          });
        }
      });
    }
  });
}
