/**
 * Polls `probe` every `intervalMs` until it gives a value (not undefined) or `timeoutMs` passes; a
 * probe that throws is tried again, and the last error is named if time runs out.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((done) => setTimeout(done, intervalMs));
  }
  const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
}

/** Polls `probe` every `intervalMs` until it returns true or `timeoutMs` passes. */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  await eventually(what, async () => ((await probe()) ? true : undefined), timeoutMs, intervalMs);
}

/** GET `url` and report whether it answered 2xx within `timeoutMs`. */
export async function httpOk(url: string, timeoutMs = 1000): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  await response.arrayBuffer();
  return response.ok;
}
