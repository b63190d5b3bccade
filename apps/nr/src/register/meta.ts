import * as z from "zod";

// What `nr cluster register` records in the state's `meta` besides the phases' checkpoints,
// and what `nr cluster status` reads back from it: never a secret.

/** Which agent this machine registers as (`--name` or `--agent-id`). */
export const RecordedAgent = z.object({ name: z.string().optional(), agentId: z.string().optional() });

/** The pins the run used. */
export const RecordedPins = z.object({
  name: z.string(),
  origin: z.string(),
  source: z.string(),
  hash: z.string(),
  versions: z.record(z.string(), z.string()),
});

/** A part of `meta` as its schema reads it; undefined when it is not there or not that (a hand edit). */
export function recorded<T>(schema: z.ZodType<T>, value: unknown): T | undefined {
  const read = schema.safeParse(value);
  return read.success ? read.data : undefined;
}
