import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { rolldown } from "rolldown";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;
const ROOT_KEY = "pack_root_key_0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "latchkey-pack-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The first `node` on PATH outside a node_modules: the system's, the one npm itself runs on,
 * and the one a consumer's project has (CI's is Node 20). Null when there is none.
 */
function systemNode(): { path: string; major: number } | null {
  for (const entry of (process.env.PATH ?? "").split(delimiter)) {
    const path = join(entry, "node");
    if (!entry || entry.includes("node_modules") || !existsSync(path)) continue;
    const version = execFileSync(path, ["--version"], { encoding: "utf8" });
    return { path, major: Number.parseInt(version.slice(1), 10) };
  }
  return null;
}
const SYSTEM_NODE = systemNode();
const SERVER_MIN_MAJOR = Number.parseInt(
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).engines.node.replace(">=", ""),
  10,
);

/** Starts the installed `latchkey serve` on this Node; resolves with its port once it listens. */
function serve(): Promise<{ port: number; stop: () => void }> {
  const child = spawn(join(dir, "node_modules/.bin/latchkey"), ["serve"], {
    cwd: dir,
    env: {
      // The bin's `#!/usr/bin/env node` finds the Node running this test (24) first.
      PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`,
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
      const m = /"port":(\d+)[^\n]*latchkey listening/.exec(out);
      if (m) resolve({ port: Number(m[1]), stop: () => child.kill("SIGTERM") });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`latchkey exited with ${code}:\n${out}`)));
  });
}

/**
 * A consumer's program: creates an API (Connect JSON) and a key (gRPC-web), verifies the key
 * without a root key (Connect binary) and reads the refusal of a call without one.
 */
function consumerProgram(port: number): string {
  return `import { Code, ConnectError, createLatchkeyClient, ErrorDetailSchema } from "@latchkey/client";
const baseUrl = "http://127.0.0.1:${port}";
const rootKey = "${ROOT_KEY}";
const api = await createLatchkeyClient({ baseUrl, rootKey }).apis.createApi({ name: "from-the-package" });
const key = await createLatchkeyClient({ baseUrl, rootKey, protocol: "grpc-web" }).keys.createKey({ apiId: api.data.apiId });
const anonymous = createLatchkeyClient({ baseUrl, useBinaryFormat: true });
const verified = await anonymous.keys.verifyKey({ key: key.data.key, apiId: api.data.apiId });
const refused = await anonymous.apis.createApi({ name: "refused" }).then(() => null, (e) => ConnectError.from(e));
const detail = refused?.findDetails(ErrorDetailSchema)[0];
console.log(JSON.stringify({ valid: verified.data.valid, refused: [Code[refused?.code], detail?.status, detail?.code] }));
`;
}

const CHROMIUM = "/usr/bin/chromium";

/**
 * Runs the browser bundle in a real headless Chromium, in a page of the server's own origin
 * (an empty page Playwright serves for it, so no CORS is involved), and answers what the
 * program logged.
 */
async function inChromium(port: number, bundle: string): Promise<unknown> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage();
    const origin = `http://127.0.0.1:${port}`;
    await page.route(`${origin}/consumer-page`, (route) =>
      route.fulfill({ contentType: "text/html", body: "<!doctype html><title>consumer</title>" }),
    );
    await page.goto(`${origin}/consumer-page`);
    const logged = new Promise<string>((resolve, reject) => {
      page.on("console", (m) => {
        if (m.text().startsWith("{")) resolve(m.text());
      });
      page.on("pageerror", reject);
    });
    await page.addScriptTag({ content: bundle, type: "module" });
    return JSON.parse(await logged);
  } finally {
    await browser.close();
  }
}

const EXPECTED_ANSWER = {
  valid: true,
  refused: ["Unauthenticated", 401, "err:svc:authentication:missing"],
};

describe("the npm packages latchkey and @latchkey/client", () => {
  beforeAll(async () => {
    // dist/ is built by `npm test` (pretest); pack both packages without building again.
    await run(
      "npm",
      [
        "pack",
        "--ignore-scripts",
        // The console's workspace is private: its built files ship inside latchkey.
        "--workspace=packages/client",
        "--include-workspace-root",
        "--pack-destination",
        dir,
      ],
      { cwd: ROOT },
    );
    const tarballs = readdirSync(dir).filter((f) => f.endsWith(".tgz"));
    expect(tarballs.sort()).toEqual(["latchkey-0.1.0.tgz", "latchkey-client-0.1.0.tgz"]);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", type: "module" }));
    await run(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        ...tarballs.map((t) => join(dir, t)),
      ],
      { cwd: dir, timeout: 170_000 },
    );
  }, 180_000);

  it("install no Node binary: a project's `node` stays its own", () => {
    const installed = readdirSync(join(dir, "node_modules"));
    expect(
      installed.filter((name) => /^node($|-bin-setup$|-(linux|darwin|win)-)/.test(name)),
    ).toEqual([]);
    expect(existsSync(join(dir, "node_modules/.bin/node"))).toBe(false);
  });

  it("are Apache-2.0 with the license text; the server ships the contract", () => {
    for (const name of ["latchkey", "@latchkey/client"]) {
      const at = join(dir, "node_modules", name);
      expect(JSON.parse(readFileSync(join(at, "package.json"), "utf8")).license).toBe("Apache-2.0");
      expect(readFileSync(join(at, "LICENSE"), "utf8")).toContain("Apache License");
    }
    // The contract ships for other languages' generators (docs/clients.md).
    for (const proto of readdirSync(join(ROOT, "proto/latchkey/v2")))
      expect(existsSync(join(dir, "node_modules/latchkey/proto/latchkey/v2", proto))).toBe(true);
  });

  it("the client depends on the Connect and protobuf runtime only", () => {
    const pkg = JSON.parse(
      readFileSync(join(dir, "node_modules/@latchkey/client/package.json"), "utf8"),
    );
    expect(Object.keys(pkg.dependencies).sort()).toEqual([
      "@bufbuild/protobuf",
      "@connectrpc/connect",
      "@connectrpc/connect-web",
    ]);
  });

  it.runIf(SYSTEM_NODE && SYSTEM_NODE.major < SERVER_MIN_MAJOR)(
    `the latchkey bin refuses a Node older than ${SERVER_MIN_MAJOR} in one line`,
    async () => {
      const node = SYSTEM_NODE as NonNullable<typeof SYSTEM_NODE>;
      const env = { PATH: `${dirname(node.path)}${delimiter}${process.env.PATH ?? ""}` };
      // --version: a Node the check lets through answers and exits instead of serving.
      const failed = await run(join(dir, "node_modules/.bin/latchkey"), ["--version"], {
        env,
      }).then(
        () => expect.fail("latchkey started on an unsupported Node"),
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      expect(failed.code).toBe(1);
      expect(failed.stdout).toBe("");
      expect(failed.stderr).toMatch(
        new RegExp(
          `^latchkey needs Node.js ${SERVER_MIN_MAJOR} or newer; this is Node.js v${node.major}\\.\\d+\\.\\d+\\n$`,
        ),
      );
    },
  );

  it("the bin serves; the client calls it from the system Node, as installed, and as a browser bundle in Node and in Chromium", async () => {
    if (!SYSTEM_NODE) expect.fail("no node on PATH outside node_modules (npm runs on one)");
    const server = await serve();
    try {
      writeFileSync(join(dir, "use.mjs"), consumerProgram(server.port));
      // The web console ships built inside the server's package and is served from there.
      const consolePage = await fetch(`http://127.0.0.1:${server.port}/console/`);
      expect(consolePage.status).toBe(200);
      const html = await consolePage.text();
      const script = /\/console\/assets\/[\w.-]+\.js/.exec(html)?.[0];
      expect(script).toBeDefined();
      expect((await fetch(`http://127.0.0.1:${server.port}${script}`)).status).toBe(200);
      expect(existsSync(join(dir, "node_modules/latchkey/dist/console/index.html"))).toBe(true);
      const direct = await run(SYSTEM_NODE.path, ["use.mjs"], { cwd: dir });
      expect(JSON.parse(direct.stdout)).toEqual(EXPECTED_ANSWER);

      // The same program bundled for a browser: every import resolved into one file, none left
      // for a Node built-in, and it runs where only fetch is there to call with.
      const warnings: string[] = [];
      const bundle = await rolldown({
        input: join(dir, "use.mjs"),
        cwd: dir,
        platform: "browser",
        onLog: (level, log) => {
          if (level === "warn") warnings.push(log.message);
        },
      });
      const { output } = await bundle.generate({ format: "esm" });
      await bundle.close();
      const [chunk] = output;
      expect(warnings).toEqual([]);
      expect(output).toHaveLength(1);
      expect(chunk.imports).toEqual([]);
      expect(chunk.code).not.toMatch(/\bfrom\s*["']node:|require\(/);
      writeFileSync(join(dir, "use.browser.mjs"), chunk.code);
      const bundled = await run(SYSTEM_NODE.path, ["use.browser.mjs"], { cwd: dir });
      expect(JSON.parse(bundled.stdout)).toEqual(EXPECTED_ANSWER);
      if (existsSync(CHROMIUM))
        expect(await inChromium(server.port, chunk.code)).toEqual(EXPECTED_ANSWER);
    } finally {
      server.stop();
    }
  }, 120_000);
});
