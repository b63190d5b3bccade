import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

export interface TokenServerOptions {
  /** user → password. A request without Basic credentials is anonymous. */
  users: Readonly<Record<string, string>>;
  /** The `service` tokens are for (the registry's audience). */
  service: string;
  issuer?: string;
  /** What `user` (undefined: anonymous) may do on `repository`; default: everything for a known user, nothing anonymously. */
  grant?: (user: string | undefined, repository: string, requested: string[]) => string[];
  /** Token lifetime; default 300 s. */
  expiresInSeconds?: number;
}

export interface TokenServer {
  /** The realm a registry's challenge names: `http://127.0.0.1:PORT/token`. */
  readonly realm: string;
  readonly service: string;
  readonly issuer: string;
  /** The JWKS the registry verifies tokens with. */
  readonly jwks: { keys: JWK[] };
  /** Every token request, in order: who asked (after a password check) and for which scopes. */
  readonly requests: Array<{ user: string | undefined; scopes: string[]; status: number }>;
  /** While set, every request is answered 401, as a token server that stopped trusting the caller would. */
  refuse(on: boolean): void;
  stop(): Promise<void>;
}

/**
 * A docker token server (the protocol the distribution registry's `token` auth speaks) on
 * loopback: `GET /token?service=…&scope=repository:NAME:pull,push` with optional Basic auth,
 * answered with an ES256 JWT carrying the `access` claim the registry checks.
 */
export async function startTokenServer(options: TokenServerOptions): Promise<TokenServer> {
  const issuer = options.issuer ?? "nodekit-test-token-server";
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const kid = randomUUID();
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
  const requests: TokenServer["requests"] = [];
  let refusing = false;
  const grant =
    options.grant ??
    ((user: string | undefined, _repo: string, requested: string[]) => (user === undefined ? [] : requested));

  const unauthorized = (response: ServerResponse, message: string) => {
    response.writeHead(401, { "content-type": "application/json", "www-authenticate": 'Basic realm="token"' });
    response.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message }] }));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const scopes = url.searchParams.getAll("scope");
    if (url.pathname !== "/token" || request.method !== "GET") {
      response.writeHead(404).end();
      return;
    }
    let user: string | undefined;
    const header = request.headers.authorization;
    if (header?.startsWith("Basic ")) {
      const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      const name = decoded.slice(0, colon);
      if (colon < 0 || options.users[name] !== decoded.slice(colon + 1)) {
        requests.push({ user: undefined, scopes, status: 401 });
        unauthorized(response, "invalid username or password");
        return;
      }
      user = name;
    }
    if (refusing) {
      requests.push({ user, scopes, status: 401 });
      unauthorized(response, "this token server refuses every request");
      return;
    }
    const access = scopes.flatMap((scope) => {
      const [type, ...rest] = scope.split(":");
      const actions = rest.pop()?.split(",") ?? [];
      const name = rest.join(":");
      if (type !== "repository") return [];
      const allowed = grant(user, name, actions).filter((action) => actions.includes(action));
      return allowed.length === 0 ? [] : [{ type, name, actions: allowed }];
    });
    if (user === undefined && access.length === 0 && scopes.length > 0) {
      requests.push({ user, scopes, status: 401 });
      unauthorized(response, "authentication required");
      return;
    }
    const expiresIn = options.expiresInSeconds ?? 300;
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ access })
      .setProtectedHeader({ alg: "ES256", kid, typ: "JWT" })
      .setIssuer(issuer)
      .setSubject(user ?? "")
      .setAudience(options.service)
      .setIssuedAt(now)
      .setNotBefore(now - 5)
      .setExpirationTime(now + expiresIn)
      .setJti(randomUUID())
      .sign(privateKey);
    requests.push({ user, scopes, status: 200 });
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        token,
        access_token: token,
        expires_in: expiresIn,
        issued_at: new Date(now * 1000).toISOString(),
      }),
    );
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolvePromise) => server.listen(0, "127.0.0.1", resolvePromise));
  const { port } = server.address() as AddressInfo;
  return {
    realm: `http://127.0.0.1:${port}/token`,
    service: options.service,
    issuer,
    jwks: { keys: [jwk] },
    requests,
    refuse(on) {
      refusing = on;
    },
    stop: () =>
      new Promise<void>((resolvePromise) => {
        server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}
