/**
 * Whether a server of the sandbox's answers `url`, and how (`accept` judges the status).
 *
 * Each try has 2 s. A server that is not there refuses the connection at once, and that is the
 * answer. A server that is there but slow (the supervisor in a long reconcile pass, on two
 * cores at load 20 while a suite runs) is asked again until `patienceMs` has passed: a
 * timeout alone is no proof that it stopped. `status` read one such timeout as "the NVKE
 * controller emulator is not running", and `up` would have restarted a healthy supervisor.
 */
export async function answers(
  url: string,
  accept: (status: number) => boolean,
  options: { patienceMs?: number; tryMs?: number } = {},
): Promise<boolean> {
  const deadline = performance.now() + (options.patienceMs ?? 10_000);
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(options.tryMs ?? 2_000) });
      await response.body?.cancel();
      return accept(response.status);
    } catch (error) {
      const timedOut = (error as Error).name === "TimeoutError";
      if (!timedOut || performance.now() >= deadline) return false;
    }
  }
}
