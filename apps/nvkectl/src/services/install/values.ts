import { UserError } from "@nodekit/errors";
import type { ImageChoice } from "@nodekit/stack-config";
import { errorCodes } from "../../errors.ts";
import { type Architecture, type InstallContext, NICO_CREDENTIALS_SECRET } from "./context.ts";

export function chooseImage(choice: ImageChoice | undefined, arch: Architecture, key: string): string | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === "string") return choice;
  const image = choice[arch];
  if (image === undefined) {
    throw new UserError(errorCodes.IMAGE_NOT_CONFIGURED, `the stack config names no ${arch} image in ${key}`, {
      why: `the site's nodes are ${arch}, and ${key} lists images per architecture`,
      next: `add ${key}.${arch}, or give one multi-architecture reference`,
      facts: { key, architecture: arch },
    });
  }
  return image;
}

/** The values the install layers over the items that take the stack's values (stackValues: true). */
export function stackValues(context: InstallContext): Record<string, unknown> {
  const { stack, observations } = context;
  const pinned = context.release?.stackImages;
  const profiles = pinned?.profiles ?? chooseImage(stack.images.profiles, observations.architecture, "images.profiles");
  if (profiles === undefined) {
    throw new UserError(errorCodes.IMAGE_NOT_CONFIGURED, "the stack config names no profile content image", {
      why: "without a release, images.profiles names the profile content image",
      next: "set images.profiles in the stack config",
      facts: { key: "images.profiles" },
    });
  }
  const controller =
    context.release === undefined
      ? chooseImage(stack.images.controller, observations.architecture, "images.controller")
      : pinned?.controller;
  return {
    nodeSelector: { "kubernetes.io/arch": observations.architecture },
    nico: {
      endpoint: stack.nico.endpoint,
      organizationId: stack.nico.organizationId,
      apiName: stack.nico.apiName,
      credentialsSecret: NICO_CREDENTIALS_SECRET,
    },
    images: { profiles, ...(controller === undefined ? {} : { controller }) },
    // The controller API's port and pod labels come from the stack config, which the
    // client-networks NetworkPolicy selects by, so the chart and the policy cannot diverge.
    service: { port: stack.controllerApi.port },
    podLabels: stack.controllerApi.podSelector,
  };
}

export function stackValuesSummary(context: InstallContext): string {
  const summary = `the stack's values for ${context.observations.architecture}`;
  const pinned = context.release?.stackImages;
  if (pinned === undefined) return summary;
  const controller = pinned.controller === undefined ? "" : `, images.controller ${pinned.controller}`;
  return `${summary}; pinned by the release: images.profiles ${pinned.profiles}${controller}`;
}
