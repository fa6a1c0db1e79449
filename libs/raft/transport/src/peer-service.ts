import type { ServiceDefinition } from '@grpc/grpc-js';

/**
 * The peer service, hand-written: binary frames pass through grpc-js untouched (see
 * frame-codec.ts for their layout), so no protobuf schema is involved.
 *
 * - `Send`: client stream of batch frames; the server answers with an empty message when the
 *   client ends the stream (normally never: the stream lives as long as the connection).
 * - `SendSnapshot`: client stream of one snapshot header, chunks and a trailer; the server answers
 *   once the receiver has accepted the snapshot.
 */
export const PEER_SERVICE_NAME = 'ward.raft.transport.v1.Peer';
export const SEND_PATH = `/${PEER_SERVICE_NAME}/Send`;
export const SEND_SNAPSHOT_PATH = `/${PEER_SERVICE_NAME}/SendSnapshot`;

export const EMPTY_RESPONSE: Buffer = Buffer.alloc(0);

const identity = (bytes: Buffer): Buffer => bytes;
const toBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

export const peerServiceDefinition: ServiceDefinition = {
  Send: {
    path: SEND_PATH,
    requestStream: true,
    responseStream: false,
    requestSerialize: toBuffer,
    requestDeserialize: identity,
    responseSerialize: toBuffer,
    responseDeserialize: identity,
    originalName: 'send',
  },
  SendSnapshot: {
    path: SEND_SNAPSHOT_PATH,
    requestStream: true,
    responseStream: false,
    requestSerialize: toBuffer,
    requestDeserialize: identity,
    responseSerialize: toBuffer,
    responseDeserialize: identity,
    originalName: 'sendSnapshot',
  },
};

export const serializeFrame = toBuffer;
export const deserializeFrame = identity;
