import { afterEach, describe, expect, test } from "vitest";
import { EmulatorApiError, type Refuse } from "./api-error.ts";
import { type EmulatorServer, type EmulatorServerOptions, Router, startEmulatorServer } from "./http.ts";

class TestError extends EmulatorApiError {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
  toBody(requestId: string) {
    return { error: { status: this.status, message: this.message, requestId } };
  }
}
const refuse: Refuse = (status, message) => new TestError(status, message);

const servers: EmulatorServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(options: Partial<EmulatorServerOptions> = {}) {
  const lines: string[] = [];
  const server = await startEmulatorServer({
    log: (line) => lines.push(line),
    refuse,
    control: { adminToken: "the-admin-token", routes: { "/_emulator/echo": (body) => ({ echoed: body }) } },
    handle: async () => {
      throw refuse(404, "nothing here");
    },
    ...options,
  });
  servers.push(server);
  return { url: server.url, lines };
}

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

describe("the control routes", () => {
  test("take only the admin token: 401 in the emulator's error shape otherwise, before the body is read", async () => {
    const { url, lines } = await start({ wwwAuthenticate: 'Bearer realm="test"' });
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: "the-admin-token" },
    ];
    for (const headers of attempts) {
      const response = await post(`${url}/_emulator/echo`, '{"a": 1}', headers);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="test"');
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/admin token/);
    }
    const allowed = await post(`${url}/_emulator/echo`, '{"a": 1}', { authorization: "Bearer the-admin-token" });
    expect(await allowed.json()).toEqual({ echoed: { a: 1 } });
    expect(lines.join("\n")).not.toContain("the-admin-token");
  });

  test("take POST and a JSON object, and name an unknown route", async () => {
    const { url } = await start({ control: { adminToken: undefined, routes: {} } });
    const get = await fetch(`${url}/_emulator/echo`);
    expect([get.status, ((await get.json()) as { error: { message: string } }).error.message]).toEqual([
      405,
      "GET is not allowed on /_emulator/echo; use POST",
    ]);
    expect((await post(`${url}/_emulator/echo`, "[1]")).status).toBe(400);
    expect((await post(`${url}/_emulator/echo`, "{}", { "content-type": "text/plain" })).status).toBe(415);
    const unknown = await post(`${url}/_emulator/nope`, "{}");
    expect([unknown.status, ((await unknown.json()) as { error: { message: string } }).error.message]).toEqual([
      404,
      "no emulator route /_emulator/nope",
    ]);
  });
});

describe("Router", () => {
  test("404 for an unknown path before authentication; 405 with Allow after it; the path's ids decoded", async () => {
    const routes = new Router<string>();
    routes.add("GET", "/things/{id}", "get a thing");
    routes.add("DELETE", "/things/{id}", "delete a thing");
    const asked: string[] = [];
    const { url } = await start({
      handle: async (exchange) => {
        const { handler, params, principal } = await routes.resolve(exchange, refuse, () => {
          asked.push(exchange.path);
          if (exchange.req.headers.authorization !== "Bearer ok") throw refuse(401, "who are you?");
          return "alice";
        });
        exchange.json(200, { handler, params, principal });
      },
    });
    const ok = { authorization: "Bearer ok" };

    expect((await fetch(`${url}/nothing`)).status).toBe(404);
    expect(asked).toEqual([]);
    expect((await fetch(`${url}/things/1`)).status).toBe(401);
    const put = await fetch(`${url}/things/1`, { method: "PUT", headers: ok });
    expect([put.status, put.headers.get("allow")]).toEqual([405, "GET, DELETE"]);
    expect(await (await fetch(`${url}/things/a%20b/`, { headers: ok })).json()).toEqual({
      handler: "get a thing",
      params: ["a b"],
      principal: "alice",
    });
  });

  test("a failure of the emulator's own is a logged 500 in its error shape", async () => {
    const { url, lines } = await start({
      handle: async () => {
        throw new TypeError("boom");
      },
    });
    const response = await fetch(`${url}/x?y=1`);
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe("internal error: boom");
    expect(lines[0]).toMatch(/^internal error on GET \/x: TypeError: boom/);
    expect(lines.at(-1)).toMatch(/^GET \/x\?y=1 500 \d+ms$/);
  });
});
