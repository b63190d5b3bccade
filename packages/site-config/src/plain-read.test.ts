import { decodePlainYaml } from "@nodekit/documents/plain-yaml";
import fc from "fast-check";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { API_VERSION, isSiteConfig, KIND } from "./checks.ts";
import { formatConfig } from "./parse.ts";
import { configsOf } from "./test-support.ts";

// loadConfig reads the file nvkectl writes with the plain decoder (no js-yaml): for every
// configuration formatConfig can write, the decoder must read it, and read it as js-yaml does
// (but for one decline, below).

const siteName = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
// Any text but a line break in a path (the decoder declines the block scalar dump writes
// then): quotes, colons, `#`, spaces at the ends, unicode, control characters, lone surrogates.
const pathText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.stringMatching(/^[A-Za-z0-9._ :#'"-]{0,30}$/),
);
const siteArb = fc.record({
  name: siteName,
  url: fc.oneof(
    fc.constantFrom("http://127.0.0.1:30080", "https://nvke.example.com", "http://[::1]:8080/api?x=1#frag"),
    siteName.map((name) => `https://${name}.example.com:8443/${name}`),
  ),
  kubeconfig: pathText.filter((text) => !/[\n\r\u0085\u2028\u2029]/.test(text)).map((text) => `/${text}`),
});
const configArb = configsOf(siteArb);

describe("the plain decoder reads what formatConfig writes", () => {
  it("for random configurations: read, equal to js-yaml's load, and a valid config", () => {
    fc.assert(
      fc.property(configArb, (config) => {
        const text = formatConfig(config);
        const decoded = decodePlainYaml(text);
        if (decoded === undefined) {
          // The one decline: a plain scalar shaped like a YAML number that js-yaml reads as a
          // string because the number is not finite (a site named "1e310", which dump leaves
          // unquoted). The full reader reads it; the decoder does not redo js-yaml's arithmetic.
          const numberLike = /^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;
          const unquoted = text.split("\n").map((line) => /^ *(?:- )?[a-zA-Z]+: (.*)$/.exec(line)?.[1] ?? "");
          expect(
            unquoted.some((value) => numberLike.test(value) && !Number.isFinite(Number(value))),
            text,
          ).toBe(true);
          expect(load(text)).toEqual(config);
          return;
        }
        expect(decoded, text).toStrictEqual(load(text));
        expect(decoded).toEqual(config);
        expect(isSiteConfig(decoded)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("reads the empty configuration (sites: [])", () => {
    const text = formatConfig({ apiVersion: API_VERSION, kind: KIND, sites: [] });
    expect(text).toContain("sites: []");
    expect(decodePlainYaml(text)).toStrictEqual({ apiVersion: API_VERSION, kind: KIND, sites: [] });
  });
});
