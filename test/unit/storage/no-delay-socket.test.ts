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

/** Writes `text` at once, as postgres.js writes its startup message, and reads the answer. */
async function roundTrip(socket: net.Socket, text: string): Promise<string> {
  socket.write(text);
  let answer = "";
  socket.on("data", (chunk) => {
    answer += chunk;
  });
  await once(socket, "close");
  return answer;
}

describe("the sockets of the PostgreSQL pool", () => {
  it("connect over TCP with TCP_NODELAY and carry what was written before they connected", async () => {
    const server = await echo("a");
    const connect = vi.spyOn(net, "connect");
    const socket = noDelaySocket()({ host: ["127.0.0.1"], port: [portOf(server)], path: false });
    expect(connect).toHaveBeenCalledWith({
      host: "127.0.0.1",
      port: portOf(server),
      noDelay: true,
    });
    // postgres.js names a failed connection's host and port from the socket.
    expect(socket).toMatchObject({ host: "127.0.0.1", port: portOf(server) });
    expect(socket.connecting).toBe(true);
    expect(await roundTrip(socket, "hello")).toBe("a:hello");
  });

  it("take the hosts of a multi-host URL in turn, one per connection", async () => {
    const [a, b] = [await echo("a"), await echo("b")];
    const open = noDelaySocket();
    const target = { host: ["127.0.0.1", "127.0.0.1"], port: [portOf(a), portOf(b)] };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await roundTrip(open(target), "x"));
    expect(answers).toEqual(["a:x", "b:x", "a:x"]);
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
