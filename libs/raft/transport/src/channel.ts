import { Client, credentials, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';
import type { BackoffOptions } from './backoff';
import type { KeepaliveOptions } from './options';

/**
 * A grpc-js client with its own connection (a local subchannel pool), explicit message limits,
 * keepalive and reconnect backoff, and retries off (a retried client stream would buffer frames
 * out of sight of our bounded queue).
 */
export function createPeerClient(
  address: string,
  maxFrameBytes: number,
  keepalive: KeepaliveOptions,
  backoff: BackoffOptions,
  channelCredentials: ChannelCredentials = credentials.createInsecure(),
): Client {
  const options: ChannelOptions = {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.max_send_message_length': maxFrameBytes,
    'grpc.max_receive_message_length': maxFrameBytes,
    'grpc.keepalive_time_ms': keepalive.timeMs,
    'grpc.keepalive_timeout_ms': keepalive.timeoutMs,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.initial_reconnect_backoff_ms': Math.ceil(backoff.initialMs),
    'grpc.max_reconnect_backoff_ms': Math.ceil(backoff.maxMs),
    'grpc.enable_retries': 0,
  };
  return new Client(address, channelCredentials, options);
}
