import { SeededRng } from '@ward/shared/clock';

function mix32(value: number): number {
  let z = value >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * A sub-seed for one component (`network`, `disk-3`, `workload`, ...), derived from the run's
 * seed and the component's name: adding a component or a fault kind never perturbs the others.
 */
export function deriveSeed(seed: number, name: string): number {
  let h = 0x811c9dc5 ^ mix32(seed >>> 0) ^ mix32(Math.floor(seed / 0x1_0000_0000));
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return mix32(h);
}

/** A seeded generator for one named component of a run. */
export function rngFor(seed: number, name: string): SeededRng {
  return new SeededRng(deriveSeed(seed, name));
}
