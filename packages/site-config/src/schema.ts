import * as z from "zod";
import { API_VERSION, checkKubeconfigPath, checkSiteName, checkSiteUrl, KIND } from "./checks.ts";

// The zod schema of the config file. The plain values, types and checks are in checks.ts
// (no zod), with the fast check that lets a valid file be read without loading zod.
export { API_VERSION, emptyConfig, KIND, type Site, type SiteConfig } from "./checks.ts";

const refined = (check: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const message = check(value);
    if (message !== undefined) ctx.addIssue({ code: "custom", message });
  });

const siteSchema = z.strictObject({
  name: refined(checkSiteName),
  url: refined(checkSiteUrl),
  kubeconfig: refined(checkKubeconfigPath),
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
      // Runs even when other fields are invalid (`when` below), so that one pass reports
      // everything; hence the defensive reads of whatever parts are well-formed.
      if (typeof config !== "object" || config === null || Array.isArray(config)) return;
      const raw = config as { activeSite?: unknown; sites?: unknown };
      const sites: unknown[] = Array.isArray(raw.sites) ? raw.sites : [];
      const seen = new Map<string, number>();
      sites.forEach((site, index) => {
        const name = typeof site === "object" && site !== null ? (site as { name?: unknown }).name : undefined;
        if (typeof name !== "string") return;
        const first = seen.get(name);
        if (first === undefined) seen.set(name, index);
        else
          ctx.addIssue({
            code: "custom",
            path: ["sites", index, "name"],
            message: `is already the name of sites[${first}]; site names are unique`,
          });
      });
      if (typeof raw.activeSite === "string" && !seen.has(raw.activeSite)) {
        const known = [...seen.keys()];
        ctx.addIssue({
          code: "custom",
          path: ["activeSite"],
          message:
            known.length === 0
              ? "names a site, but no site is configured"
              : `is not the name of a configured site (${known.join(", ")})`,
        });
      }
    },
    { when: () => true },
  );
