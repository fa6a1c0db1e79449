import { status as GrpcStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { MEMBER_REMOVED_MESSAGE, nodeServiceHandlers } from './node-service';
import type { NodeCore } from './node-core';

describe('a removed member', () => {
  it('answers every call of its internal API with a clear error', async () => {
    const core = { removed: true } as unknown as NodeCore;
    const handlers = nodeServiceHandlers(core);
    expect(Object.keys(handlers).length).toBeGreaterThan(5);
    for (const [name, handler] of Object.entries(handlers)) {
      await expect((handler as (...args: unknown[]) => Promise<unknown>)({}, {}, {}), name).rejects.toMatchObject({ grpcCode: GrpcStatus.UNAVAILABLE, message: MEMBER_REMOVED_MESSAGE });
    }
  });
});
