import { describe, expect, test } from "vitest";
import { ipIdentity, normalizeEkThumbprint, normalizeIp } from "./fields.ts";

describe("normalizeIp", () => {
  test.each([
    ["10.0.0.1", "10.0.0.1"],
    ["::1", "::1"],
    ["0:0:0:0:0:0:0:1", "::1"],
    ["2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:db8:0:0:0:0:2:1", "2001:db8::2:1"],
    ["::FFFF:10.0.0.1", "::ffff:10.0.0.1"],
    ["0:0:0:0:0:ffff:a00:1", "::ffff:10.0.0.1"],
    ["::", "::"],
  ])("%s is written %s", (input, expected) => {
    expect(normalizeIp(input)).toBe(expected);
  });
});

describe("ipIdentity", () => {
  test("an IPv4-mapped IPv6 address is the IPv4 address", () => {
    expect(ipIdentity(normalizeIp("::ffff:10.0.0.1"))).toBe("10.0.0.1");
  });

  test("other addresses are themselves", () => {
    expect(ipIdentity("10.0.0.1")).toBe("10.0.0.1");
    expect(ipIdentity("2001:db8::1")).toBe("2001:db8::1");
  });
});

test("normalizeEkThumbprint drops colons and lowercases", () => {
  expect(normalizeEkThumbprint("AB:cd:01")).toBe("abcd01");
});
