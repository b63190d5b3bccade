/**
 * The loop of a test-only controller stand-in: reconcile, wait, again, until stopped, as a
 * controller's resync does. A failed pass is retried on the next (the API server may be busy or a
 * CRD not installed yet); `stop()` waits for the pass under way, so nothing writes after it.
 */
export function reconcileLoop(
  reconcile: () => Promise<void>,
  intervalMs: number,
): { reconcile: () => Promise<void>; stop: () => Promise<void> } {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  const loop = async () => {
    while (!stopped) {
      current = reconcile().catch(() => {});
      await current;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  };
  void loop();
  return {
    reconcile,
    async stop() {
      stopped = true;
      await current;
    },
  };
}
