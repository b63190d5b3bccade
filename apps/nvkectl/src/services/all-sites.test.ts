import { renderOutput, type View } from "@nodekit/cli-kit";
import { UserError } from "@nodekit/errors";
import { describe, expect, it } from "vitest";
import {
  acrossSites,
  checkAllSitesUsage,
  mergeSiteResults,
  noSitesConfigured,
  type SiteResult,
  siteView,
  someSitesFailed,
} from "./all-sites.ts";

const sites = (...names: string[]) => names.map((name) => ({ name }));
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("acrossSites", () => {
  it("asks every site, at most `concurrency` at once, and keeps the sites' order", async () => {
    let inFlight = 0;
    let most = 0;
    const asked: string[] = [];
    const results = await acrossSites(
      sites("a", "b", "c", "d", "e", "f", "g"),
      async (site) => {
        asked.push(site.name);
        inFlight++;
        most = Math.max(most, inFlight);
        // Later sites answer first: the results are still in the sites' order.
        for (let i = 0; i < 10 - asked.length; i++) await tick();
        inFlight--;
        return [site.name.toUpperCase()];
      },
      3,
    );
    expect(most).toBe(3);
    expect(asked.sort()).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
    expect(results.map((r) => ("items" in r ? r.items : r.error))).toEqual([
      ["A"],
      ["B"],
      ["C"],
      ["D"],
      ["E"],
      ["F"],
      ["G"],
    ]);
  });

  it("starts them all together when there are fewer sites than the bound", async () => {
    let inFlight = 0;
    let most = 0;
    await acrossSites(sites("a", "b", "c"), async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await tick();
      inFlight--;
      return [];
    });
    expect(most).toBe(3);
  });

  it("a site whose read throws is its result, and the others still answer", async () => {
    const down = new Error("connect ECONNREFUSED 127.0.0.1:1");
    const results = await acrossSites(sites("a", "down", "c"), async (site) => {
      if (site.name === "down") throw down;
      return [1];
    });
    expect(results).toEqual([
      { site: "a", items: [1] },
      { site: "down", error: down },
      { site: "c", items: [1] },
    ]);
  });

  it("no sites: no results; a bound below 1 is a bug", async () => {
    expect(await acrossSites([], async () => [1])).toEqual([]);
    await expect(acrossSites(sites("a"), async () => [1], 0)).rejects.toThrow(RangeError);
  });
});

describe("mergeSiteResults", () => {
  const results: SiteResult<{ name: string }>[] = [
    { site: "lab", items: [{ name: "t2" }, { name: "t1" }] },
    { site: "edge", error: new Error("down") },
    { site: "east", items: [{ name: "t9" }] },
    { site: "alpha", error: new Error("also down") },
  ];

  it("the rows by site name, each site's in the order it sent them, with `site` first", () => {
    const { rows } = mergeSiteResults(results);
    expect(rows).toEqual([
      { site: "east", name: "t9" },
      { site: "lab", name: "t2" },
      { site: "lab", name: "t1" },
    ]);
    expect(Object.keys(rows[0] ?? {})).toEqual(["site", "name"]);
  });

  it("the failed sites by name, with their errors", () => {
    expect(mergeSiteResults(results).failures.map((f) => [f.site, (f.error as Error).message])).toEqual([
      ["alpha", "also down"],
      ["edge", "down"],
    ]);
  });

  it("a site that answers with nothing adds no row and no failure", () => {
    expect(mergeSiteResults([{ site: "a", items: [] }])).toEqual({ rows: [], failures: [] });
  });
});

describe("siteView", () => {
  type Pool = { name: string; cluster: string };
  const view: View<Pool> = {
    kind: "nodepool",
    name: (p) => p.name,
    columns: [
      { header: "name", value: (p) => p.name },
      { header: "cluster", value: (p) => p.cluster, wide: true },
    ],
  };
  const rows = [
    { site: "east", name: "workers", cluster: "t1" },
    { site: "lab", name: "workers", cluster: "t2" },
  ];

  it("SITE first; a promoted wide column second, in every format", async () => {
    expect(await renderOutput("table", { ...siteView(view, { promote: "cluster" }), rows })).toBe(
      "SITE   CLUSTER   NAME\neast   t1        workers\nlab    t2        workers\n",
    );
    expect(await renderOutput("table", { ...siteView(view), rows })).toBe(
      "SITE   NAME\neast   workers\nlab    workers\n",
    );
  });

  it("-o json is a List whose items carry `site`; -o name stays kind/name, as kubectl -A's", async () => {
    const json = JSON.parse(await renderOutput("json", { ...siteView(view), rows }));
    expect(json.kind).toBe("List");
    expect(json.items).toEqual(rows);
    expect(await renderOutput("name", { ...siteView(view), rows })).toBe("nodepool/workers\nnodepool/workers\n");
  });
});

describe("the errors", () => {
  it("SOME_SITES_FAILED names the sites, exit 6", () => {
    const error = someSitesFailed(
      [
        { site: "edge", error: new Error("x") },
        { site: "west", error: new Error("y") },
      ],
      3,
    );
    expect(error.code).toBe("SOME_SITES_FAILED");
    expect(error.exitCode).toBe(6);
    expect(error.message).toBe('2 of 3 sites did not answer: "edge" and "west"');
    expect(error.next[0]).toContain("--site edge");
  });

  it("NO_SITES_CONFIGURED names the file and how to add a site, exit 4", () => {
    const error = noSitesConfigured("/home/op/.config/nvkectl/config.json");
    expect(error.code).toBe("NO_SITES_CONFIGURED");
    expect(error.exitCode).toBe(4);
    expect(error.why).toContain("/home/op/.config/nvkectl/config.json");
    expect(error.next[0]).toContain("nvkectl config set-site");
  });

  it("a NAME with --all-sites is a usage error; none is fine", () => {
    expect(() => checkAllSitesUsage({ kind: "cluster", names: ["a"] })).toThrow(UserError);
    expect(() => checkAllSitesUsage({ kind: "cluster", names: [] })).not.toThrow();
  });
});
