import {
  ClusterReleaseSchema,
  ClusterSchema,
  MachineImageSchema,
  NodePoolReleaseSchema,
  NodePoolSchema,
  NodeStateSchema,
} from "@nodekit/nvke-api";
import * as z from "zod";

const ms = z.number().int().nonnegative();

const ClusterRecordSchema = z.object({
  cluster: ClusterSchema,
  createdMs: ms,
  readyMs: ms.optional(),
  deletingSinceMs: ms.optional(),
  kubeconfigSecret: z.enum(["none", "pending", "written", "skipped"]),
});

const NodePoolRecordSchema = z.object({
  pool: NodePoolSchema.omit({ status: true, clusterName: true }),
  managed: z.boolean(),
  nodes: z.array(z.object({ name: z.string().min(1), state: NodeStateSchema, since: ms })),
  nextIndex: z.number().int().nonnegative(),
  deletingSinceMs: ms.optional(),
  hasBeenReady: z.boolean(),
});

/** Each record is filed under its object's ID: a state whose keys and IDs disagree would serve the wrong object. */
function keyedById<T extends z.ZodType>(record: T, idOf: (value: z.output<T>) => string) {
  return z.record(z.string(), record).superRefine((entries, context) => {
    for (const [key, value] of Object.entries(entries)) {
      if (idOf(value as z.output<T>) !== key) {
        context.addIssue({
          code: "custom",
          path: [key],
          message: `is filed under ${JSON.stringify(key)} but has another id`,
        });
      }
    }
  });
}

/**
 * The emulator's state file, as {@link EmulatorState} describes it: checked in full at
 * start, so that a file of the wrong shape is refused with its problems' lines instead of
 * crashing the emulator later (or writing Secrets named after a missing field).
 */
export const EmulatorStateSchema = z.strictObject({
  version: z.literal(1),
  clusters: keyedById(ClusterRecordSchema, (record) => record.cluster.id),
  nodePools: keyedById(NodePoolRecordSchema, (record) => record.pool.id),
  machineImages: keyedById(MachineImageSchema, (image) => image.id),
  clusterReleases: keyedById(ClusterReleaseSchema, (release) => release.id),
  nodePoolReleases: keyedById(NodePoolReleaseSchema, (release) => release.id),
  secretsToDelete: z.array(z.string().min(1)),
});
