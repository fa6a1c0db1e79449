/** Polls `probe` every `intervalMs` until it returns true or `timeoutMs` passes. */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await probe()) return;
    } catch (error) {
      lastError = error;
    }
    await new Promise((done) => setTimeout(done, intervalMs));
  }
  const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
}

/** GET `url` and report whether it answered 2xx within `timeoutMs`. */
export async function httpOk(url: string, timeoutMs = 1000): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  await response.arrayBuffer();
  return response.ok;
}
