import { describe, expect, it } from "vitest";
import { isLoopbackHost, plainHttpWarning } from "./plain-http.ts";

describe("plainHttpWarning", () => {
  it("warns about plain HTTP to a non-loopback host", () => {
    expect(plainHttpWarning("http://10.0.0.5:30080")).toBe(
      "http://10.0.0.5:30080 is plain HTTP: a bearer token will be sent in clear text to 10.0.0.5:30080; " +
        "use it from a trusted network only, or put a TLS endpoint in front of it and name that",
    );
    expect(plainHttpWarning("http://nvke.example.com/api")).toContain("clear text to nvke.example.com;");
    expect(plainHttpWarning("http://[fd00::1]:30080")).toContain("clear text to [fd00::1]:30080;");
  });

  it("says nothing for https, loopback, or a value that is not a URL", () => {
    for (const url of [
      "https://10.0.0.5:30080",
      "http://127.0.0.1:30080",
      "http://127.8.9.10",
      "http://localhost:30080",
      "http://LOCALHOST.",
      "http://[::1]:30080",
      "http://[::ffff:127.0.0.1]/",
      "not a url",
    ]) {
      expect(plainHttpWarning(url), url).toBeUndefined();
    }
  });
});

describe("isLoopbackHost", () => {
  it("knows 127.0.0.0/8, ::1 and localhost, and nothing else", () => {
    expect(["127.0.0.1", "127.255.255.254", "::1", "[::1]", "localhost"].every(isLoopbackHost)).toBe(true);
    expect(["128.0.0.1", "10.0.0.1", "::2", "localhost.example.com", "0.0.0.0"].some(isLoopbackHost)).toBe(false);
  });
});
