import { runServer } from "verdaccio";

// Runs verdaccio with the config file named in argv[2], listening on 127.0.0.1 on a port
// the system picks; prints {"port":N} on stdout once it listens (src/registry.ts reads it).

const config = process.argv[2];
if (config === undefined) throw new Error("usage: verdaccio-main.ts CONFIG");
const server = await runServer(config);
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 })}\n`);
});
