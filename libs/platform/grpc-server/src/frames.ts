// Length-prefixed frames on a byte stream (a TCP or TLS socket): each frame follows its length as
// a u32, little-endian. For internal links where HTTP/2 and gRPC around each message cost more
// than the message (the raft peers' frame stream, the gateway's Exchange with a member).
import type { Writable } from 'node:stream';

export const FRAME_LENGTH_BYTES = 4;

/** A frame over its reader's bound. */
export class FrameTooLargeError extends Error {
  constructor(
    readonly frameBytes: number,
    readonly maxFrameBytes: number,
  ) {
    super(`frame of ${frameBytes} bytes exceeds ${maxFrameBytes}`);
    this.name = 'FrameTooLargeError';
  }
}

/**
 * Cuts a byte stream into length-prefixed frames. Bytes are kept as the chunks that brought them
 * and joined once per frame, so a large frame arriving in many chunks is copied once.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxFrameBytes: number) {}

  /** The frames these bytes complete, in order; throws FrameTooLargeError on a frame over the bound. */
  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Buffer[] = [];
    while (this.buffered >= FRAME_LENGTH_BYTES) {
      const length = this.peekLength();
      if (length > this.maxFrameBytes) throw new FrameTooLargeError(length, this.maxFrameBytes);
      if (this.buffered < FRAME_LENGTH_BYTES + length) break;
      frames.push(this.take(FRAME_LENGTH_BYTES + length).subarray(FRAME_LENGTH_BYTES));
    }
    return frames;
  }

  private peekLength(): number {
    const first = this.chunks[0]!;
    if (first.length >= FRAME_LENGTH_BYTES) return first.readUInt32LE(0);
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined.readUInt32LE(0);
  }

  private take(bytes: number): Buffer {
    const first = this.chunks[0]!;
    let taken: Buffer;
    if (first.length >= bytes) {
      taken = first.subarray(0, bytes);
      if (first.length === bytes) this.chunks.shift();
      else this.chunks[0] = first.subarray(bytes);
    } else {
      const joined = Buffer.concat(this.chunks);
      taken = joined.subarray(0, bytes);
      this.chunks = joined.length === bytes ? [] : [joined.subarray(bytes)];
    }
    this.buffered -= bytes;
    return taken;
  }
}

/**
 * Writes one frame, its length and then its parts' bytes, in one write (the socket is corked
 * meanwhile); false as `Writable.write` says (wait for 'drain').
 */
export function writeFrame(stream: Writable, ...parts: Uint8Array[]): boolean {
  let length = 0;
  for (const part of parts) length += part.length;
  const prefix = Buffer.allocUnsafe(FRAME_LENGTH_BYTES);
  prefix.writeUInt32LE(length, 0);
  stream.cork();
  let writable = stream.write(prefix);
  for (const part of parts) writable = stream.write(part);
  stream.uncork();
  return writable;
}

/** `host:port` (the host in brackets for IPv6) into its parts. */
export function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon);
  return { host: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host, port: Number(address.slice(colon + 1)) };
}

