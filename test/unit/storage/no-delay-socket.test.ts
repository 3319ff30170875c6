import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { noDelaySocket } from "../../../src/storage/postgres.js";

const servers: net.Server[] = [];
const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A server that answers every chunk with `name:` and the chunk, on a port or a socket path. */
async function echo(name: string, path?: string): Promise<net.Server> {
  const server = net.createServer((socket) => {
    socket.on("data", (chunk) => socket.end(`${name}:${chunk}`));
  });
  servers.push(server);
  server.listen(path ?? { host: "127.0.0.1", port: 0 });
  await once(server, "listening");
  return server;
}

const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = await echo("gone");
  const port = portOf(s);
  servers.splice(servers.indexOf(s), 1);
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Takes the socket as postgres.js does (`await` of the function's result), writes `text` at
 * once, as postgres.js then writes its startup message, and reads the answer ("" when the
 * connection failed).
 */
async function roundTrip(opening: net.Socket, text: string): Promise<string> {
  const socket = await Promise.resolve(opening);
  let answer = "";
  socket.on("data", (chunk) => {
    answer += chunk;
  });
  const closed = new Promise((resolve) => socket.on("close", resolve));
  socket.on("error", () => {});
  socket.write(text);
  await closed;
  return answer;
}

describe("the sockets of the PostgreSQL pool", () => {
  it("turn Nagle's algorithm off and carry what was written before they connected", async () => {
    const server = await echo("a");
    const noDelay = vi.spyOn(net.Socket.prototype, "setNoDelay");
    const socket = noDelaySocket()({ host: ["127.0.0.1"], port: [portOf(server)], path: false });
    expect(noDelay).toHaveBeenCalledWith(true);
    // postgres.js names a failed connection's host and port from the socket.
    expect(socket).toMatchObject({ host: "127.0.0.1", port: portOf(server) });
    expect(await roundTrip(socket, "hello")).toBe("a:hello");
  });

  it("go to the first host of a multi-host URL until connecting to it fails", async () => {
    const [a, b] = [await echo("a"), await echo("b")];
    const open = noDelaySocket();
    const both = { host: ["127.0.0.1", "127.0.0.1"], port: [portOf(a), portOf(b)] };
    expect([await roundTrip(open(both), "x"), await roundTrip(open(both), "x")]).toEqual([
      "a:x",
      "a:x",
    ]);
    const firstDown = { host: ["127.0.0.1", "127.0.0.1"], port: [await closedPort(), portOf(b)] };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await roundTrip(open(firstDown), "y"));
    expect(answers).toEqual(["", "b:y", "b:y"]);
  });

  it("use the Unix socket path when there is one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "latchkey-socket-"));
    dirs.push(dir);
    const path = join(dir, ".s.PGSQL.5432");
    await echo("unix", path);
    const socket = noDelaySocket()({ host: ["localhost"], port: [5432], path });
    expect(await roundTrip(socket, "hi")).toBe("unix:hi");
  });
});
