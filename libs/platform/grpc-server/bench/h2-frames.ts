// A measurement of the lever named in docs/benchmarks.md ("Where the time goes"): a unary gRPC
// server that reads HTTP/2 frames and HPACK header blocks itself, straight off a net.Socket, instead
// of node:http2. It serves what unary.bench.ts sends (small unary calls from grpc-js, one header
// block each, bodies far inside the windows) and no more: no CONTINUATION, no stream flow control
// of answers, no priorities, no TLS, no limits. It exists to tell what such a server could save per
// call, not to serve anyone; what it lacks is listed in docs/benchmarks.md.
import { createServer, type Server, type Socket } from 'node:net';
import { HUFFMAN_BITS, HUFFMAN_CODES, STATIC_TABLE } from './hpack-tables';

/** A Huffman decoding trie: a node is its two children, a leaf the symbol. */
type TrieNode = [TrieNode | number | null, TrieNode | number | null];
const TRIE: TrieNode = [null, null];
for (let symbol = 0; symbol < HUFFMAN_BITS.length; symbol++) {
  const bits = HUFFMAN_BITS[symbol]!;
  const code = HUFFMAN_CODES[symbol]!;
  let node = TRIE;
  for (let i = bits - 1; i >= 0; i--) {
    const bit = (code >>> i) & 1;
    if (i === 0) node[bit] = symbol;
    else node = (node[bit] ??= [null, null]) as TrieNode;
  }
}

function huffmanDecode(bytes: Buffer, start: number, end: number): string {
  let out = '';
  let node = TRIE;
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    for (let shift = 7; shift >= 0; shift--) {
      const next = node[(byte >> shift) & 1]!;
      if (typeof next === 'number') {
        out += String.fromCharCode(next);
        node = TRIE;
      } else node = next;
    }
  }
  return out;
}

/** HPACK's decoder side: the static table, the connection's dynamic table, integers and strings. */
class HeaderDecoder {
  private readonly dynamic: [string, string][] = [];
  private size = 0;
  private maxSize = 4096;
  private bytes: Buffer = Buffer.alloc(0);
  private at = 0;

  decode(bytes: Buffer, start: number, end: number): Record<string, string> {
    this.bytes = bytes;
    this.at = start;
    const headers: Record<string, string> = {};
    while (this.at < end) {
      const first = bytes[this.at]!;
      if (first & 0x80) {
        const [name, value] = this.entry(this.integer(7));
        headers[name] = value;
      } else if (first & 0x40) {
        const index = this.integer(6);
        const name = index === 0 ? this.string() : this.entry(index)[0];
        const value = this.string();
        this.add(name, value);
        headers[name] = value;
      } else if (first & 0x20) {
        this.maxSize = this.integer(5);
        this.evict();
      } else {
        const index = this.integer(4);
        const name = index === 0 ? this.string() : this.entry(index)[0];
        headers[name] = this.string();
      }
    }
    return headers;
  }

  private entry(index: number): readonly [string, string] {
    const entry = index <= STATIC_TABLE.length ? STATIC_TABLE[index - 1] : this.dynamic[index - STATIC_TABLE.length - 1];
    if (entry === undefined) throw new Error(`HPACK index ${index} is not in the table`);
    return entry;
  }

  private add(name: string, value: string): void {
    this.dynamic.unshift([name, value]);
    this.size += name.length + value.length + 32;
    this.evict();
  }

  private evict(): void {
    while (this.size > this.maxSize) {
      const [name, value] = this.dynamic.pop()!;
      this.size -= name.length + value.length + 32;
    }
  }

  private integer(prefixBits: number): number {
    const mask = (1 << prefixBits) - 1;
    let value = this.bytes[this.at++]! & mask;
    if (value < mask) return value;
    let shift = 0;
    let byte: number;
    do {
      byte = this.bytes[this.at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  }

  private string(): string {
    const huffman = (this.bytes[this.at]! & 0x80) !== 0;
    const length = this.integer(7);
    const start = this.at;
    this.at += length;
    return huffman ? huffmanDecode(this.bytes, start, this.at) : this.bytes.toString('latin1', start, this.at);
  }
}

/** A header field as a literal without indexing and with a new name (stateless for the encoder). */
function literalField(name: string, value: string): Buffer {
  const nameBytes = Buffer.from(name, 'latin1');
  const valueBytes = Buffer.from(value, 'latin1');
  if (nameBytes.length > 126 || valueBytes.length > 126) throw new Error('literalField: short fields only');
  return Buffer.concat([Buffer.from([0x00, nameBytes.length]), nameBytes, Buffer.from([valueBytes.length]), valueBytes]);
}

// The answer's header blocks, as ward's direct path sends them (unary-streams.ts): `:status 200`
// is the static table's entry 8.
const RESPONSE_BLOCK = Buffer.concat([Buffer.from([0x88]), literalField('content-type', 'application/grpc+proto'), literalField('grpc-accept-encoding', 'identity,deflate,gzip'), literalField('grpc-encoding', 'identity')]);
const TRAILER_BLOCK = Buffer.concat([literalField('grpc-status', '0'), literalField('grpc-message', 'OK')]);

const FRAME_HEADER_BYTES = 9;
const PREFACE_BYTES = 24;
const enum FrameType {
  Data = 0,
  Headers = 1,
  RstStream = 3,
  Settings = 4,
  Ping = 6,
  GoAway = 7,
  WindowUpdate = 8,
}
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY = 0x20;
/** Received DATA bytes after which the connection's window is opened again. */
const WINDOW_UPDATE_BYTES = 32_768;

function writeFrameHeader(out: Buffer, at: number, length: number, type: number, flags: number, stream: number): void {
  out[at] = length >>> 16;
  out[at + 1] = (length >>> 8) & 0xff;
  out[at + 2] = length & 0xff;
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(stream, at + 5);
}

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  writeFrameHeader(out, 0, payload.length, type, flags, stream);
  payload.copy(out, FRAME_HEADER_BYTES);
  return out;
}

/** Headers, one message and trailers of one answer, in one write. */
function answer(socket: Socket, stream: number, message: Buffer): void {
  const out = Buffer.allocUnsafe(3 * FRAME_HEADER_BYTES + RESPONSE_BLOCK.length + 5 + message.length + TRAILER_BLOCK.length);
  let at = 0;
  writeFrameHeader(out, at, RESPONSE_BLOCK.length, FrameType.Headers, END_HEADERS, stream);
  RESPONSE_BLOCK.copy(out, at + FRAME_HEADER_BYTES);
  at += FRAME_HEADER_BYTES + RESPONSE_BLOCK.length;
  writeFrameHeader(out, at, 5 + message.length, FrameType.Data, 0, stream);
  out[at + FRAME_HEADER_BYTES] = 0;
  out.writeUInt32BE(message.length, at + FRAME_HEADER_BYTES + 1);
  message.copy(out, at + FRAME_HEADER_BYTES + 5);
  at += FRAME_HEADER_BYTES + 5 + message.length;
  writeFrameHeader(out, at, TRAILER_BLOCK.length, FrameType.Headers, END_HEADERS | END_STREAM, stream);
  TRAILER_BLOCK.copy(out, at + FRAME_HEADER_BYTES);
  socket.write(out);
}

/** One unary call: its request headers and its whole request body (a gRPC length-prefixed message). */
export type FrameHandler = (headers: Record<string, string>, body: Buffer) => Buffer;

function serveConnection(socket: Socket, handler: FrameHandler): void {
  socket.setNoDelay(true);
  socket.on('error', () => undefined);
  const decoder = new HeaderDecoder();
  const open = new Map<number, { headers: Record<string, string>; body: Buffer | null }>();
  let pending: Buffer | null = null;
  let prefaceRead = false;
  let unacknowledged = 0;
  // SETTINGS_MAX_CONCURRENT_STREAMS (3) 1000.
  const settings = Buffer.alloc(6);
  settings.writeUInt16BE(3, 0);
  settings.writeUInt32BE(1000, 2);
  socket.write(frame(FrameType.Settings, 0, 0, settings));
  const finish = (stream: number, call: { headers: Record<string, string>; body: Buffer | null }): void => {
    open.delete(stream);
    answer(socket, stream, handler(call.headers, call.body ?? Buffer.alloc(0)));
  };
  socket.on('data', (chunk: Buffer) => {
    const bytes: Buffer = pending === null ? chunk : Buffer.concat([pending, chunk]);
    let at = 0;
    if (!prefaceRead) {
      if (bytes.length < PREFACE_BYTES) {
        pending = bytes;
        return;
      }
      prefaceRead = true;
      at = PREFACE_BYTES;
    }
    while (bytes.length - at >= FRAME_HEADER_BYTES) {
      const length = (bytes[at]! << 16) | (bytes[at + 1]! << 8) | bytes[at + 2]!;
      if (bytes.length - at < FRAME_HEADER_BYTES + length) break;
      const type = bytes[at + 3]!;
      const flags = bytes[at + 4]!;
      const stream = bytes.readUInt32BE(at + 5) & 0x7fffffff;
      const start = at + FRAME_HEADER_BYTES;
      const end = start + length;
      const padding = flags & PADDED ? bytes[start]! : 0;
      const payloadStart = flags & PADDED ? start + 1 : start;
      if (type === FrameType.Data) {
        unacknowledged += length;
        const call = open.get(stream);
        if (call !== undefined) {
          const piece = bytes.subarray(payloadStart, end - padding);
          call.body = call.body === null ? Buffer.from(piece) : Buffer.concat([call.body, piece]);
          if (flags & END_STREAM) finish(stream, call);
        }
      } else if (type === FrameType.Headers) {
        if (!(flags & END_HEADERS)) throw new Error('h2-frames: a header block in CONTINUATION frames is not served');
        const headers = decoder.decode(bytes, flags & PRIORITY ? payloadStart + 5 : payloadStart, end - padding);
        const call = { headers, body: null };
        if (flags & END_STREAM) finish(stream, call);
        else open.set(stream, call);
      } else if (type === FrameType.RstStream) {
        open.delete(stream);
      } else if (type === FrameType.Settings && !(flags & ACK)) {
        socket.write(frame(FrameType.Settings, ACK, 0));
      } else if (type === FrameType.Ping && !(flags & ACK)) {
        socket.write(frame(FrameType.Ping, ACK, 0, bytes.subarray(start, end)));
      } else if (type === FrameType.GoAway) {
        socket.end();
      }
      at = end;
    }
    pending = at < bytes.length ? bytes.subarray(at) : null;
    if (unacknowledged >= WINDOW_UPDATE_BYTES) {
      const increment = Buffer.alloc(4);
      increment.writeUInt32BE(unacknowledged, 0);
      unacknowledged = 0;
      socket.write(frame(FrameType.WindowUpdate, 0, 0, increment));
    }
  });
}

/** Listens on 127.0.0.1 (port 0: any); resolves with the server and its port. */
export function listenFrames(handler: FrameHandler): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => serveConnection(socket, handler));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port })));
}
