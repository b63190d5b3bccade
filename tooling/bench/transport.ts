/**
 * Which HTTP transport `@nodekit/http` sends through, by measurement (issue 25 item 2):
 * Node's own node:http, undici's `request()` (the npm package), Node's global fetch (the
 * undici Node bundles) and ky over that fetch.
 *
 *   node tooling/bench/transport.ts [--rounds N] [--json]
 *
 * Each transport is bundled by esbuild into one CommonJS file, as the CLIs bundle their
 * hot path, and timed three ways against one loopback server, interleaved in rounds in a
 * new random order each round:
 *
 * - start: a fresh process sends one GET and reads its JSON body (wall ms and CPU ms): what
 *   a short-lived read like `nvkectl get clusters` pays for its HTTP stack;
 * - requests: 300 sequential GETs with keep-alive in one process (ms per request): what
 *   `release verify`'s hundreds of existence checks pay;
 * - stream: one 256 MiB body streamed and counted (MB/s, CPU ms, peak RSS): a download.
 *
 * Benchmarks, never timed tests: the figures go into packages/http/README.md.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf("--rounds") + 1] ?? "") || 11;
const asJson = args.includes("--json");
const here = dirname(fileURLToPath(import.meta.url));
const STREAM_BYTES = 256 * 1024 * 1024;
const REQUESTS = 300;

// Each variant: `get(url)` resolves to the body text; `stream(url)` to the bytes counted.
// Only what a transport itself offers is used (keep-alive where it has it by default).
const variants: Record<string, string> = {
  "node:http": `
const http = require("node:http");
const agent = new http.Agent({ keepAlive: true });
const get = (url) => new Promise((resolve, reject) => {
  http.get(url, { agent }, (res) => { const chunks = []; res.on("data", (c) => chunks.push(c)); res.on("end", () => resolve(Buffer.concat(chunks).toString())); res.on("error", reject); }).on("error", reject);
});
const stream = (url) => new Promise((resolve, reject) => {
  http.get(url, { agent }, (res) => { let n = 0; res.on("data", (c) => { n += c.length; }); res.on("end", () => resolve(n)); res.on("error", reject); }).on("error", reject);
});
const close = () => agent.destroy();`,
  "undici request()": `
const { request, Agent } = require("undici");
const dispatcher = new Agent();
const get = async (url) => (await request(url, { dispatcher })).body.text();
const stream = async (url) => { let n = 0; for await (const c of (await request(url, { dispatcher })).body) n += c.length; return n; };
const close = () => dispatcher.close();`,
  "fetch (Node's undici)": `
const get = async (url) => (await fetch(url)).text();
const stream = async (url) => { let n = 0; for await (const c of (await fetch(url)).body) n += c.length; return n; };
const close = () => {};`,
  "ky over fetch": `
const ky = require("ky").default;
const get = (url) => ky(url, { retry: 0, timeout: false }).text();
const stream = async (url) => { let n = 0; for await (const c of (await ky(url, { retry: 0, timeout: false })).body) n += c.length; return n; };
const close = () => {};`,
};

const DRIVER = `
const [mode, url] = process.argv.slice(2);
(async () => {
  const started = process.hrtime.bigint();
  let result;
  if (mode === "start") { JSON.parse(await get(url + "/json")); }
  else if (mode === "requests") { for (let i = 0; i < ${REQUESTS}; i++) JSON.parse(await get(url + "/json")); }
  else { result = await stream(url + "/stream"); if (result !== ${STREAM_BYTES}) throw new Error("short body " + result); }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  await close();
  const cpu = process.cpuUsage();
  process.stdout.write(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

const work = mkdtempSync(join(tmpdir(), "nodekit-transport-"));
const bundles = new Map<string, string>();
for (const [name, code] of Object.entries(variants)) {
  const slug = name.replace(/[^a-z]+/gi, "-").replace(/-+$/, "");
  // The entries sit beside this file so that ky and undici resolve from tooling/bench.
  const entry = join(here, `.transport-${slug}.cjs`);
  writeFileSync(entry, `${code}\n${DRIVER}`);
  try {
    await build({
      entry: { [slug]: entry },
      outDir: work,
      format: ["cjs"],
      platform: "node",
      target: "node22",
      noExternal: [/.*/],
      silent: true,
      clean: false,
      dts: false,
      splitting: false,
    });
  } finally {
    rmSync(entry, { force: true });
  }
  bundles.set(name, join(work, `${slug}.cjs`));
}

const payload = Buffer.from(
  JSON.stringify({ items: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `c-${i}` })) }),
);
const chunk = Buffer.alloc(64 * 1024, 120);
const server = createServer((req, res) => {
  if (req.url === "/stream") {
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": STREAM_BYTES });
    let sent = 0;
    const more = () => {
      while (sent < STREAM_BYTES) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", more);
      }
      res.end();
    };
    more();
    return;
  }
  res.writeHead(200, { "content-type": "application/json", "content-length": payload.length }).end(payload);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

interface Sample {
  ms: number;
  cpuMs: number;
  maxRssMb: number;
  wallMs: number;
}

function run(bundle: string, mode: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [bundle, mode, url], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      out += text;
    });
    child.on("exit", (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) reject(new Error(`${bundle} ${mode} exited ${code}`));
      else resolve({ ...(JSON.parse(out) as Omit<Sample, "wallMs">), wallMs });
    });
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

const cases = [...bundles.keys()].flatMap((name) =>
  ["start", "requests", "stream"].map((mode) => ({ name, mode, samples: [] as Sample[] })),
);
const bare = { name: "node -e 0", mode: "bare", samples: [] as Sample[] };
const bareScript = join(work, "bare.cjs");
writeFileSync(
  bareScript,
  `const cpu = process.cpuUsage(); process.stdout.write(JSON.stringify({ ms: 0, cpuMs: (cpu.user + cpu.system) / 1000, maxRssMb: process.resourceUsage().maxRSS / 1024 }));`,
);
try {
  // Two warm-up runs of each (the page cache, the server's first connections).
  for (const c of cases) for (let i = 0; i < 2; i++) await run(bundles.get(c.name) ?? "", c.mode);
  for (let round = 0; round < rounds; round++) {
    const order = [...cases, bare].sort(() => Math.random() - 0.5);
    for (const c of order) {
      c.samples.push(await run(c === bare ? bareScript : (bundles.get(c.name) ?? ""), c.mode));
    }
  }
} finally {
  server.close();
  rmSync(work, { recursive: true, force: true });
}

const results = cases.map((c) => ({
  transport: c.name,
  mode: c.mode,
  wallMs: median(c.samples.map((s) => s.wallMs)),
  cpuMs: median(c.samples.map((s) => s.cpuMs)),
  ms: median(c.samples.map((s) => s.ms)),
  maxRssMb: Math.max(...c.samples.map((s) => s.maxRssMb)),
}));
const bareWall = median(bare.samples.map((s) => s.wallMs));
const bareCpu = median(bare.samples.map((s) => s.cpuMs));

if (asJson) {
  process.stdout.write(`${JSON.stringify({ rounds, node: process.version, bareWall, bareCpu, results }, null, 2)}\n`);
} else {
  const out = [
    `HTTP transports, median of ${rounds} interleaved rounds (node ${process.version}); node -e 0: ${bareWall.toFixed(1)} ms wall, ${bareCpu.toFixed(1)} ms CPU`,
    "",
    "transport                 start: wall / CPU ms   300 GETs: ms per GET   256 MiB: MB/s, CPU ms, peak RSS MB",
  ];
  for (const name of bundles.keys()) {
    const of = (mode: string) => results.find((r) => r.transport === name && r.mode === mode);
    const start = of("start");
    const requests = of("requests");
    const stream = of("stream");
    out.push(
      `${name.padEnd(24)}  ${`${start?.wallMs.toFixed(1)} / ${start?.cpuMs.toFixed(1)}`.padStart(20)}   ${((requests?.ms ?? 0) / REQUESTS).toFixed(3).padStart(20)}   ${(STREAM_BYTES / 1e6 / ((stream?.ms ?? 1) / 1000)).toFixed(0).padStart(6)}, ${stream?.cpuMs.toFixed(0)}, ${stream?.maxRssMb.toFixed(0)}`,
    );
  }
  process.stdout.write(`${out.join("\n")}\n`);
}
