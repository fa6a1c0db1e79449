/**
 * A running 64-bit (two 32-bit lanes) hash of everything that happens in a run: same seed, same
 * hash; any divergence in behaviour changes it.
 */
export class TraceHash {
  private a = 0x811c9dc5;
  private b = 0x27d4eb2f;
  private count = 0;

  add(value: number): void {
    const low = value >>> 0;
    const high = Math.floor(value / 0x1_0000_0000) >>> 0;
    this.a = Math.imul(this.a ^ low, 0x01000193) ^ high;
    this.b = Math.imul(this.b ^ (low + 0x9e3779b9), 0x85ebca6b) ^ Math.imul(high, 0xc2b2ae35);
    this.b = (this.b << 13) | (this.b >>> 19);
    this.count++;
  }

  addBig(value: bigint): void {
    this.add(Number(value & 0xffff_ffffn));
    this.add(Number(value >> 32n));
  }

  addString(text: string): void {
    for (let i = 0; i < text.length; i++) this.add(text.charCodeAt(i));
  }

  /** Number of values folded in. */
  size(): number {
    return this.count;
  }

  hex(): string {
    return (this.a >>> 0).toString(16).padStart(8, '0') + (this.b >>> 0).toString(16).padStart(8, '0');
  }
}
