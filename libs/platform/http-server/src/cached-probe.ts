// A readiness check asked at most once per interval: health endpoints may be polled often (and by
// anyone), while the check itself costs a call to the cluster. A check that throws is "not ready".

/** `check`, answered from its last result while that is younger than `intervalMs`. */
export function cachedProbe(check: () => Promise<boolean>, nowMs: () => number, intervalMs = 1000): () => Promise<boolean> {
  let checkedAtMs = -Infinity;
  let ready = false;
  return async () => {
    const now = nowMs();
    if (now - checkedAtMs < intervalMs) return ready;
    checkedAtMs = now;
    try {
      ready = await check();
    } catch {
      ready = false;
    }
    return ready;
  };
}
