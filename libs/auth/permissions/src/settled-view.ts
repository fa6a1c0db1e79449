// The rule both permission indexes follow for their read-optimised view of a set that changes: the
// view is dropped on every change and built again once enough checks have run since then to pay
// for its O(n) build (n / VIEW_BUILD_DIVISOR checks, at least VIEW_BUILD_MIN_CHECKS), so building
// costs at most VIEW_BUILD_DIVISOR boundaries' work per check.

const VIEW_BUILD_MIN_CHECKS = 8;
const VIEW_BUILD_DIVISOR = 16;

export class SettledView<V> {
  private view: V | null = null;
  private checksSinceChange = 0;
  private refused = false;

  /** `build` may return null to refuse the set: checks then go without a view until the next change. */
  constructor(private readonly build: () => V | null) {}

  /** Whether a view is built (for tests and diagnostics). */
  get built(): boolean {
    return this.view !== null;
  }

  /** The set changed. */
  drop(): void {
    this.view = null;
    this.checksSinceChange = 0;
    this.refused = false;
  }

  /** The view for this check, or null while a build does not pay yet; `boundaries` is the set's n. */
  current(boundaries: number): V | null {
    if (this.view !== null) return this.view;
    if (this.refused) return null;
    if (++this.checksSinceChange < Math.max(VIEW_BUILD_MIN_CHECKS, boundaries / VIEW_BUILD_DIVISOR)) return null;
    this.view = this.build();
    this.refused = this.view === null;
    return this.view;
  }
}
