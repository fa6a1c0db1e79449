/** The last `maxChars` characters of a child's output, kept for failure messages. */
export class TextTail {
  private text = '';

  constructor(private readonly maxChars: number) {}

  append(chunk: Buffer): void {
    this.text = (this.text + chunk.toString('utf8')).slice(-this.maxChars);
  }

  toString(): string {
    return this.text;
  }
}
