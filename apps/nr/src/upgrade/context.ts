import type { PriorOutputs, StateStore } from "@nodekit/phase-runner";
import type { JsonValue } from "@nodekit/plan";
import type { RegisterContext } from "../register/context.ts";
import type { UpgradePlan } from "./plan.ts";

/**
 * What `nr cluster upgrade`'s phases work with: a registration's context with the new pins
 * (the register phases' plans run on it unchanged), and the upgrade's own part.
 */
export interface UpgradeContext extends RegisterContext {
  upgrade: {
    /** The registration's state (~/.nr/state.json): each component's step records its new version there. */
    registration: StateStore;
    /** What the registration's phases recorded: the register phases plan with it. */
    prior: PriorOutputs;
    /** Which component moves from which version to which (the pure planner's answer). */
    plan: UpgradePlan;
    /** The hash of the pin set the registration records now. */
    recordedPinsHash: string | undefined;
    /** The new pin set as the registration's `meta.pins` records it. */
    pins: { name: string; origin: string; source: string; hash: string; versions: Record<string, string> } & Record<
      string,
      JsonValue
    >;
  };
}
