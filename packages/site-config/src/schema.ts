import * as z from "zod";
import { API_VERSION, crossFieldIssues, KIND, SITE_FIELD_RULES } from "./rules.ts";

// nvkectl's config file as a zod schema, which names every problem. The rules it refines the
// fields with are plain functions in rules.ts: a read runs the same ones after the check
// generated from this schema (config.generated.ts, by tooling/docs/validators.ts), and loads
// this module only when that says no.

const refined = (check: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const message = check(value);
    if (message !== undefined) ctx.addIssue({ code: "custom", message });
  });

const siteSchema = z.strictObject({
  name: refined(SITE_FIELD_RULES.name),
  url: refined(SITE_FIELD_RULES.url),
  kubeconfig: refined(SITE_FIELD_RULES.kubeconfig),
});

export const siteConfigSchema = z
  .strictObject(
    {
      apiVersion: z.literal(API_VERSION),
      kind: z.literal(KIND),
      activeSite: z.string().optional(),
      sites: z.array(siteSchema).default([]),
    },
    {
      error: (issue) =>
        issue.code === "invalid_type" && issue.input !== undefined
          ? "must be a mapping with apiVersion, kind and sites"
          : undefined,
    },
  )
  .superRefine(
    (config, ctx) => {
      for (const { path, message } of crossFieldIssues(config)) ctx.addIssue({ code: "custom", path, message });
    },
    // Runs even when other fields are invalid, so that one pass reports everything.
    { when: () => true },
  );
