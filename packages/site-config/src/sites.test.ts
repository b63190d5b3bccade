import { ExitCode, UserError } from "@nodekit/errors";
import { describe, expect, it } from "vitest";
import { emptyConfig, type Site, type SiteConfig } from "./rules.ts";
import { deleteSite, listSites, resolveSite, setSite, useSite } from "./sites.ts";

const lab: Site = { name: "lab", url: "http://127.0.0.1:30080", kubeconfig: "/k/lab.kubeconfig" };
const edge: Site = { name: "edge", url: "https://edge.example.com", kubeconfig: "/k/edge.kubeconfig" };

function withSites(activeSite: string | undefined, ...sites: Site[]): SiteConfig {
  const config: SiteConfig = { ...emptyConfig(), sites };
  if (activeSite !== undefined) config.activeSite = activeSite;
  return config;
}

function thrown(fn: () => unknown): UserError {
  try {
    fn();
  } catch (error) {
    if (error instanceof UserError) return error;
    throw error;
  }
  throw new Error("expected a UserError");
}

describe("setSite", () => {
  it("makes the first site active", () => {
    const result = setSite(emptyConfig(), lab);

    expect(result).toMatchObject({ created: true, activated: true, site: lab });
    expect(result.config).toEqual(withSites("lab", lab));
  });

  it("adds a later site without changing the active one, unless asked", () => {
    expect(setSite(withSites("lab", lab), edge)).toMatchObject({
      created: true,
      activated: false,
      config: withSites("lab", lab, edge),
    });
    expect(setSite(withSites("lab", lab), edge, { activate: true })).toMatchObject({
      activated: true,
      config: withSites("edge", lab, edge),
    });
  });

  it("updates a site in place and keeps the others", () => {
    const moved = { ...lab, url: "https://lab.example.com" };

    const result = setSite(withSites("edge", lab, edge), moved);

    expect(result).toMatchObject({ created: false, activated: false, config: withSites("edge", moved, edge) });
  });

  it("does not change its input", () => {
    const config = withSites("lab", lab);
    setSite(config, edge, { activate: true });
    expect(config).toEqual(withSites("lab", lab));
  });

  it("rejects every invalid field at once", () => {
    const error = thrown(() => setSite(emptyConfig(), { name: "Not_OK", url: "ftp://x", kubeconfig: "rel/path" }));

    expect(error.code).toBe("SITE_INVALID");
    expect(error.exitCode).toBe(ExitCode.InvalidInput);
    expect(error.problems.map((p) => p.path)).toEqual([["name"], ["url"], ["kubeconfig"]]);
  });

  it("rejects a URL carrying credentials", () => {
    const error = thrown(() => setSite(emptyConfig(), { ...lab, url: "https://user:pw@lab.example.com" }));
    expect(error.problems[0]?.message).toBe("must not carry a user name or password");
  });
});

describe("useSite", () => {
  it("switches the active site", () => {
    expect(useSite(withSites("lab", lab, edge), "edge").config.activeSite).toBe("edge");
  });

  it("names the known sites when the site is unknown", () => {
    const error = thrown(() => useSite(withSites("lab", lab, edge), "prod"));

    expect(error.code).toBe("SITE_NOT_FOUND");
    expect(error.exitCode).toBe(ExitCode.NotFound);
    expect(error.message).toBe('site "prod" is not configured');
    expect(error.why).toBe("the configured sites are lab, edge");
  });
});

describe("deleteSite", () => {
  it("removes a site and keeps the active one", () => {
    expect(deleteSite(withSites("lab", lab, edge), "edge")).toEqual({
      config: withSites("lab", lab),
      site: edge,
      wasActive: false,
    });
  });

  it("clears the active site when it deletes it, and says so", () => {
    const result = deleteSite(withSites("lab", lab, edge), "lab");

    expect(result.wasActive).toBe(true);
    expect(result.config).toEqual(withSites(undefined, edge));
    expect("activeSite" in result.config).toBe(false);
  });

  it("fails for an unknown site", () => {
    expect(thrown(() => deleteSite(emptyConfig(), "lab")).exitCode).toBe(ExitCode.NotFound);
  });
});

describe("resolveSite", () => {
  it("returns the active site, or the override", () => {
    const config = withSites("lab", lab, edge);
    expect(resolveSite(config)).toEqual(lab);
    expect(resolveSite(config, "edge")).toEqual(edge);
  });

  it("fails for an unknown override even when a site is active", () => {
    expect(thrown(() => resolveSite(withSites("lab", lab), "prod")).code).toBe("SITE_NOT_FOUND");
  });

  it("tells the user how to choose a site when none is active", () => {
    const none = thrown(() => resolveSite(emptyConfig()));
    expect(none.code).toBe("NO_ACTIVE_SITE");
    expect(none.exitCode).toBe(ExitCode.NotFound);
    expect(none.facts).toEqual({ configured: 0 });

    const inactive = thrown(() => resolveSite(withSites(undefined, lab)));
    expect(inactive.why).toBe("the configured sites are lab");
    expect(inactive.facts).toEqual({ configured: 1 });
  });
});

describe("listSites", () => {
  it("marks the active site", () => {
    expect(listSites(withSites("edge", lab, edge))).toEqual([
      { ...lab, active: false },
      { ...edge, active: true },
    ]);
  });
});
