// serveBatchedCalls over real gRPC (a JSON-coded bidi method): answers of one turn share a write,
// failures become statuses that name no internals, the in-flight bound answers at once, and the
// stream ends only after every call in flight is answered.
import { afterEach, describe, expect, it } from 'vitest';
import { credentials, makeGenericClientConstructor, status, type ClientDuplexStream, type ServerDuplexStream, type ServiceDefinition } from '@grpc/grpc-js';
import { createLogger } from '@ward/platform/logging';
import { GrpcStatusError, createGrpcServer, serveBatchedCalls, type BatchedAnswer, type CallContext, type GrpcServer } from './index';

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};
const definition: ServiceDefinition = {
  Exchange: {
    path: '/test.Batch/Exchange',
    requestStream: true,
    responseStream: true,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};

interface Call {
  id: string;
  text: string;
  delayMs?: number;
  fail?: 'status' | 'raw' | 'sync';
}
type Answers = { answers: BatchedAnswer<{ text: string }>[] };

const logger = createLogger({ name: 'test', level: 'silent' });
let server: GrpcServer | undefined;
let client: { close(): void; Exchange(): ClientDuplexStream<{ calls: Call[] }, Answers> } | undefined;

afterEach(async () => {
  client?.close();
  await server?.stop(0);
});

async function start(maxInFlightCount: number, drain?: AbortSignal): Promise<{ stream: ClientDuplexStream<{ calls: Call[] }, Answers>; received: Answers[]; ended: Promise<void> }> {
  server = createGrpcServer({ host: '127.0.0.1', port: 0, maxReceiveMessageBytes: 1 << 20, maxSendMessageBytes: 1 << 20, keepaliveTimeMs: 60_000, keepaliveTimeoutMs: 10_000, maxConcurrentStreams: 10, logger });
  server.addService(definition, {
    Exchange: (stream: ServerDuplexStream<{ calls: Call[] }, Answers>, context: CallContext) =>
      serveBatchedCalls<Call, { text: string }>(stream, {
        serve: (call) => {
          if (call.fail === 'sync') throw new Error('thrown before any promise at /srv/secret');
          // Calls without a delay settle in one event-loop turn (immediates queued together run
          // together; 0 ms timers set across a millisecond boundary may not, on a loaded machine).
          const later = (run: () => void): unknown => (call.delayMs === undefined ? setImmediate(run) : setTimeout(run, call.delayMs));
          return new Promise((resolve, reject) =>
            later(() => {
              if (call.fail === 'status') reject(new GrpcStatusError(status.INVALID_ARGUMENT, 'bad call'));
              else if (call.fail === 'raw') reject(new Error('ECONNREFUSED /var/run/secret.sock'));
              else resolve({ text: `re: ${call.text}` });
            }),
          );
        },
        overloaded: { text: 'too many' },
        answerBytes: () => 16,
        maxInFlightCount,
        maxBatchBytes: 1 << 20,
        logger: context.logger,
        ...(drain === undefined ? {} : { drain }),
      }),
  });
  const port = await server.start();
  const Client = makeGenericClientConstructor(definition, 'Batch');
  const created = new Client(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as NonNullable<typeof client>;
  client = created;
  const stream = created.Exchange();
  const received: Answers[] = [];
  stream.on('data', (message: Answers) => received.push(message));
  const ended = new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  return { stream, received, ended };
}

describe('serveBatchedCalls', () => {
  it('answers every call once by id, the answers of one turn in one message, and ends after the last answer', async () => {
    const { stream, received, ended } = await start(100);
    stream.write({ calls: [{ id: '1', text: 'a' }, { id: '2', text: 'b' }, { id: '3', text: 'c' }] });
    stream.write({ calls: [{ id: '4', text: 'slow', delayMs: 50 }] });
    stream.end();
    await ended;
    const answers = received.flatMap((message) => message.answers);
    expect(answers.map((answer) => [answer.id, answer.answer?.text])).toEqual([
      ['1', 're: a'],
      ['2', 're: b'],
      ['3', 're: c'],
      ['4', 're: slow'],
    ]);
    expect(received[0]!.answers).toHaveLength(3);
  });

  it('a failed call is answered with a status (internals hidden), the others are served', async () => {
    const { stream, received, ended } = await start(100);
    stream.write({ calls: [{ id: '1', text: 'x', fail: 'status' }, { id: '2', text: 'y', fail: 'raw' }, { id: '3', text: 'z', fail: 'sync' }, { id: '4', text: 'ok' }] });
    stream.end();
    await ended;
    const byId = new Map(received.flatMap((message) => message.answers).map((answer) => [answer.id, answer]));
    expect(byId.get('1')?.status).toEqual({ code: status.INVALID_ARGUMENT, message: 'bad call' });
    expect(byId.get('2')?.status).toEqual({ code: status.INTERNAL, message: 'internal error' });
    expect(byId.get('3')?.status).toEqual({ code: status.INTERNAL, message: 'internal error' });
    expect(byId.get('4')?.answer).toEqual({ text: 're: ok' });
  });

  it('calls beyond the in-flight bound get the overloaded answer at once', async () => {
    const { stream, received, ended } = await start(2);
    stream.write({ calls: [1, 2, 3, 4].map((n) => ({ id: String(n), text: `t${n}`, delayMs: 30 })) });
    stream.end();
    await ended;
    const byId = new Map(received.flatMap((message) => message.answers).map((answer) => [answer.id, answer.answer?.text]));
    expect([...byId].sort()).toEqual([
      ['1', 're: t1'],
      ['2', 're: t2'],
      ['3', 'too many'],
      ['4', 'too many'],
    ]);
  });

  it('a drain answers the calls in flight, serves none that arrive later, and ends the stream with status OK while the client still writes', async () => {
    const drain = new AbortController();
    const { stream, received, ended } = await start(100, drain.signal);
    const statuses: number[] = [];
    stream.on('status', (s: { code: number }) => statuses.push(s.code));
    stream.write({ calls: [{ id: '1', text: 'slow', delayMs: 200 }, { id: '2', text: 'quick' }] });
    // '2' answered, so both calls arrived and '1' is in flight.
    while (received.length === 0) await new Promise((done) => setTimeout(done, 5));
    drain.abort();
    stream.write({ calls: [{ id: '3', text: 'after the drain' }] });
    await ended;
    const answers = received.flatMap((message) => message.answers);
    expect(answers.map((answer) => [answer.id, answer.answer?.text])).toEqual([
      ['2', 're: quick'],
      ['1', 're: slow'],
    ]);
    await new Promise((done) => setImmediate(done));
    expect(statuses).toEqual([status.OK]);
  });

  it('a stream opened after the drain began ends at once, serving nothing', async () => {
    const drain = new AbortController();
    drain.abort();
    const { stream, received, ended } = await start(100, drain.signal);
    stream.write({ calls: [{ id: '1', text: 'a' }] });
    await ended;
    expect(received).toEqual([]);
  });
});
