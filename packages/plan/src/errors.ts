import { defineErrorCodes, ExitCode } from "@nodekit/errors";

export const errorCodes = defineErrorCodes("plan", {
  PLAN_ITEM_UNKNOWN: {
    exitCode: ExitCode.Usage,
    meaning: "The item named to start from (--from-item) is not in the plan; the plan's items are listed.",
  },
  PLAN_STEP_FAILED: {
    exitCode: ExitCode.CheckFailed,
    meaning: "A call of the plan failed; the item and the exact call are named, and items before it are done.",
  },
});
