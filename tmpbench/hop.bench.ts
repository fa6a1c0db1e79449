// ad-hoc: CPU per message, grpc-js client stream vs raw TCP frames. Two processes (fork).
import { fork } from 'node:child_process';
import net from 'node:net';
import { Server, ServerCredentials, Client, credentials, Metadata } from '@grpc/grpc-js';
import { peerServiceDefinition, SEND_PATH, serializeFrame, deserializeFrame } from '../libs/raft/transport/src/peer-service';

const mode = process.argv[2]; // grpc | tcp
const role = process.argv[3]; // a | b
const N = 20000;
const SIZE = Number(process.env.SIZE ?? 300);

// Each side: a server receiving frames, a client sending frames to the other side.
async function grpcSide(myPort: number, otherPort: number, onFrame: (f: Buffer) => void): Promise<(f: Buffer) => void> {
  const server = new Server();
  server.addService(peerServiceDefinition, {
    Send: async (call: any, cb: any) => { for await (const f of call) onFrame(f); cb(null, Buffer.alloc(0)); },
    SendSnapshot: () => {},
  });
  await new Promise<void>((res, rej) => server.bindAsync(`127.0.0.1:${myPort}`, ServerCredentials.createInsecure(), (e) => (e ? rej(e) : res())));
  await new Promise((r) => setTimeout(r, 500));
  const client = new Client(`127.0.0.1:${otherPort}`, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  await new Promise<void>((res, rej) => client.waitForReady(Date.now() + 5000, (e) => (e ? rej(e) : res())));
  const call = client.makeClientStreamRequest<Uint8Array, Buffer>(SEND_PATH, serializeFrame, deserializeFrame, new Metadata(), {}, () => {});
  return (f) => void call.write(f);
}

async function tcpSide(myPort: number, otherPort: number, onFrame: (f: Buffer) => void): Promise<(f: Buffer) => void> {
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    let buf = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
      let off = 0;
      while (buf.length - off >= 4) {
        const len = buf.readUInt32LE(off);
        if (buf.length - off - 4 < len) break;
        onFrame(buf.subarray(off + 4, off + 4 + len));
        off += 4 + len;
      }
      buf = buf.subarray(off);
    });
  });
  await new Promise<void>((r) => server.listen(myPort, '127.0.0.1', r));
  await new Promise((r) => setTimeout(r, 500));
  const socket = net.connect(otherPort, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((r) => socket.once('connect', r));
  return (f) => {
    const h = Buffer.allocUnsafe(4);
    h.writeUInt32LE(f.length, 0);
    socket.cork(); socket.write(h); socket.write(f); socket.uncork();
  };
}

async function main() {
  if (role === undefined) {
    const a = fork(new URL(import.meta.url).pathname, [mode, 'a'], { execArgv: process.execArgv });
    const b = fork(new URL(import.meta.url).pathname, [mode, 'b'], { execArgv: process.execArgv });
    let results = 0;
    for (const c of [a, b]) c.on('message', (m) => { console.log(mode, SIZE, JSON.stringify(m)); if (++results === 2) { a.kill(); b.kill(); } });
    return;
  }
  const myPort = role === 'a' ? 40101 : 40102;
  const otherPort = role === 'a' ? 40102 : 40101;
  const frame = Buffer.alloc(SIZE, 7);
  let count = 0;
  let send: (f: Buffer) => void = () => {};
  let start = 0, cpu0: NodeJS.CpuUsage;
  let done: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const onFrame = (_f: Buffer) => {
    count++;
    if (role === 'a' && count === 100) { start = performance.now(); cpu0 = process.cpuUsage(); }
    if (role === 'b' && count === 100) { cpu0 = process.cpuUsage(); }
    if (count >= N + 100) { done(); if (role === 'b') send(frame); return; }
    setImmediate(() => send(frame)); // one message per turn, like the transports' flush
  };
  send = await (mode === 'grpc' ? grpcSide : tcpSide)(myPort, otherPort, onFrame);
  if (role === 'a') setTimeout(() => send(frame), 1500);
  await finished;
  const cpu = process.cpuUsage(cpu0!);
  process.send!({ role, usPerMsg: ((cpu.user + cpu.system) / N).toFixed(1), rtUs: role === 'a' ? ((performance.now() - start) * 1000 / N).toFixed(1) : undefined });
}
void main();
