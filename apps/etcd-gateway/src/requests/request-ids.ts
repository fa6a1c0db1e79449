import { randomBytes } from 'node:crypto';

/**
 * Request IDs for ApplyRequest headers: a random 32-bit gateway instance part and a 32-bit
 * counter, so IDs from different gateways (and restarts) do not collide in practice.
 */
export class RequestIds {
  private readonly instance: bigint;
  private counter = 0;

  constructor(instance: number = randomBytes(4).readUInt32BE(0)) {
    if (!Number.isInteger(instance) || instance < 0 || instance > 0xffff_ffff) throw new TypeError('RequestIds: instance must be a uint32');
    this.instance = BigInt(instance) << 32n;
  }

  next(): bigint {
    this.counter = (this.counter + 1) >>> 0;
    return this.instance | BigInt(this.counter);
  }
}
