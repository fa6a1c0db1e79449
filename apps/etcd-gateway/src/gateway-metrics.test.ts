import { describe, expect, it } from 'vitest';
import { createGatewayMetrics } from './gateway-metrics';

describe('createGatewayMetrics', () => {
  it('reports the longest event-loop stall beside the process metrics, and only with them', async () => {
    const withProcess = createGatewayMetrics(true);
    const without = createGatewayMetrics(false);
    try {
      expect(await withProcess.registry.render()).toMatch(/^ward_gateway_event_loop_longest_stall_seconds \S+$/m);
      expect(await without.registry.render()).not.toContain('event_loop_longest_stall_seconds');
    } finally {
      withProcess.close();
      without.close();
    }
  });
});
