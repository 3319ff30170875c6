import { once } from "node:events";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { RedisLimiter } from "../../src/ratelimit/redis.js";

// A check that Redis may have run, whose answer was lost with the connection, must not be sent
// again after reconnecting: it would take its tokens twice. A stand-in Redis server counts the
// scripts it receives on each connection and drops the first connection on the first script.

/** The commands of a RESP request buffer (arrays of bulk strings), by name. */
function commandNames(data: string): string[] {
  const names: string[] = [];
  const re = /\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n/g;
  for (let m = re.exec(data); m; m = re.exec(data)) names.push((m[1] as string).toUpperCase());
  return names;
}

const INFO = "# Server\r\nredis_version:7.0.0\r\nloading:0\r\n";

let server: net.Server | undefined;
let limiter: RedisLimiter | undefined;
afterEach(async () => {
  await limiter?.close();
  server?.close();
});

describe("the Redis limiter after a lost connection", () => {
  it("does not send again a check whose answer was lost", async () => {
    const scripts: number[] = []; // per connection
    server = net.createServer((socket) => {
      const connection = scripts.push(0) - 1;
      socket.on("data", (chunk) => {
        for (const name of commandNames(chunk.toString("latin1"))) {
          if (name === "INFO") socket.write(`$${INFO.length}\r\n${INFO}\r\n`);
          else if (name === "EVALSHA" || name === "EVAL") {
            scripts[connection] = (scripts[connection] ?? 0) + 1;
            // The first script ever: "ran" it, then the connection breaks before the answer.
            if (connection === 0) socket.destroy();
            else socket.write("*2\r\n:0\r\n:1\r\n"); // count 0 before, decision 1
          } else socket.write("+OK\r\n");
        }
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as net.AddressInfo;
    limiter = new RedisLimiter(`redis://127.0.0.1:${port}`);
    expect(await limiter.ready(5_000)).toBe(true);
    const check = [{ counter: "{ws_resend}:ns:rlns_x:u", limit: 10, cost: 1, durationMs: 60_000 }];

    await expect(limiter.check(check, Date.now())).rejects.toThrow();
    // Once reconnected, a new check goes through. A resent first check would reach the
    // server before it, on the new connection.
    const deadline = Date.now() + 10_000;
    let answered = false;
    while (!answered && Date.now() < deadline) {
      await new Promise((r) => setImmediate(r));
      answered = await limiter.check(check, Date.now()).then(
        (d) => d.success,
        () => false,
      );
    }
    expect(answered).toBe(true);
    console.log(`scripts received per connection: ${JSON.stringify(scripts)}`);
    expect(scripts[0]).toBe(1);
    expect(scripts.slice(1).reduce((a, b) => a + b, 0)).toBe(1);
  });
});
