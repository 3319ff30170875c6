import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;
const ROOT_KEY = "pack_root_key_0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "latchkey-pack-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the installed `latchkey serve`; resolves with its ports once it listens. */
function serve(): Promise<{ port: number; grpcPort: number; stop: () => void }> {
  const child = spawn(join(dir, "node_modules/.bin/latchkey"), ["serve"], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      GRPC_PORT: "0",
      ADMIN_PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: join(dir, "data"),
      ROOT_KEY,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /"port":(\d+),"grpcPort":(\d+)[^\n]*latchkey listening/.exec(out);
      if (m)
        resolve({ port: Number(m[1]), grpcPort: Number(m[2]), stop: () => child.kill("SIGTERM") });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`latchkey exited with ${code}:\n${out}`)));
  });
}

describe("the npm package", () => {
  it("installs from `npm pack` and serves with `latchkey serve`; latchkey/client talks to it", async () => {
    // dist/ is built by `npm test` (pretest); pack it without building again.
    await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], { cwd: ROOT });
    const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz")) as string;
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", type: "module" }));
    await run(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", join(dir, tarball)],
      { cwd: dir, timeout: 170_000 },
    );
    // The contract ships for other languages' generators (docs/clients.md), and the install
    // brings the Node that deploy/ runs the server with (node_modules/.bin/node).
    for (const proto of readdirSync(join(ROOT, "proto/latchkey/v2")))
      expect(existsSync(join(dir, "node_modules/latchkey/proto/latchkey/v2", proto))).toBe(true);
    const packagedNode = await run(join(dir, "node_modules/.bin/node"), ["--version"]);
    expect(packagedNode.stdout.trim()).toMatch(/^v24\./);
    const server = await serve();
    try {
      writeFileSync(
        join(dir, "use.mjs"),
        `import { createLatchkeyClient } from "latchkey/client";
const connect = createLatchkeyClient({ baseUrl: "http://127.0.0.1:${server.port}", rootKey: "${ROOT_KEY}" });
const grpc = createLatchkeyClient({ baseUrl: "http://127.0.0.1:${server.grpcPort}", rootKey: "${ROOT_KEY}", protocol: "grpc" });
const api = await connect.apis.createApi({ name: "from-the-package" });
const key = await grpc.keys.createKey({ apiId: api.data.apiId });
const verified = await grpc.keys.verifyKey({ key: key.data.key });
console.log(JSON.stringify({ apiId: api.data.apiId, valid: verified.data.valid }));
`,
      );
      const { stdout } = await run(process.execPath, ["use.mjs"], { cwd: dir });
      const answer = JSON.parse(stdout.trim());
      expect(answer.apiId).toMatch(/^api_/);
      expect(answer.valid).toBe(true);
    } finally {
      server.stop();
    }
  }, 180_000);
});
