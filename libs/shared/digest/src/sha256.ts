// SHA-256 for code that cannot reach Node's crypto (deterministic domain libraries hash their state
// to compare replicas, and seal simple tokens): @noble/hashes, an audited implementation in plain
// JavaScript with no dependencies and no Node built-ins. Edges (apps, adapters) use node:crypto.
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

type NobleHash = ReturnType<typeof nobleSha256.create>;

/** An incremental SHA-256 computation: `update` any number of times, then `digest` once. */
export class Sha256 {
  private readonly hash: NobleHash = nobleSha256.create();
  private finished = false;

  update(data: Uint8Array): this {
    if (this.finished) throw new TypeError('Sha256: update after digest');
    this.hash.update(data);
    return this;
  }

  digest(): Uint8Array {
    if (this.finished) throw new TypeError('Sha256: digest called twice');
    this.finished = true;
    return this.hash.digest();
  }
}

/** SHA-256 of the concatenation of `chunks`. */
export function sha256(...chunks: readonly Uint8Array[]): Uint8Array {
  const hash = nobleSha256.create();
  for (const chunk of chunks) hash.update(chunk);
  return hash.digest();
}
