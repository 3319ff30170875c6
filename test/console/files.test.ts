import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleFiles } from "../../src/server/console-files.js";
import { useServer } from "../harness/server.js";
import { ensureConsoleBuilt } from "./built.js";

beforeAll(ensureConsoleBuilt, 300_000);
const s = useServer();

/** A GET with the path sent as written (fetch would resolve `..` first). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const url = new URL(s.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("/console files", () => {
  it("serves the entry page, revalidated, under a CSP with a fresh style nonce each time", async () => {
    const a = await fetch(`${s.url}/console`);
    const b = await fetch(`${s.url}/console/`);
    expect(a.status).toBe(200);
    expect(a.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(a.headers.get("cache-control")).toBe("no-cache");
    expect(a.headers.get("x-frame-options")).toBe("DENY");
    expect(a.headers.get("x-content-type-options")).toBe("nosniff");
    const csp = a.headers.get("content-security-policy") ?? "";
    for (const part of [
      "default-src 'self'",
      "script-src 'self';",
      "frame-ancestors 'none'",
      "object-src 'none'",
      "base-uri 'none'",
    ])
      expect(csp).toContain(part);
    expect(csp).not.toContain("unsafe-inline");
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    const html = await a.text();
    expect(html).toContain(`nonce="${nonce}"`);
    expect(html).not.toContain("LATCHKEY_CSP_NONCE");
    // No inline script: every script element has a src.
    for (const tag of html.match(/<script[^>]*>/g) ?? []) expect(tag).toContain("src=");
    expect(/'nonce-([^']+)'/.exec(b.headers.get("content-security-policy") ?? "")?.[1]).not.toBe(
      nonce,
    );
  });

  it("answers the entry page for every console route (the app routes in the browser)", async () => {
    for (const path of [
      "/console/apis",
      "/console/apis/api_123",
      "/console/audit?event=key.create",
    ]) {
      const res = await fetch(`${s.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toContain('<div id="root">');
    }
  });

  it("serves hashed assets as immutable with their content types, and 404 for others", async () => {
    const html = await (await fetch(`${s.url}/console/`)).text();
    const assets = [...html.matchAll(/\/console\/assets\/[\w.-]+/g)].map((m) => m[0]);
    expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
    expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
    for (const asset of assets) {
      const res = await fetch(`${s.url}${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("content-type")).toBe(
        asset.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
      );
    }
    expect((await fetch(`${s.url}/console/assets/missing-0000.js`)).status).toBe(404);
    // A path that climbs out of the assets is no asset: it gets the entry page, never a file.
    for (const path of [
      "/console/assets/../../package.json",
      "/console/assets/..%2f..%2fpackage.json",
    ]) {
      const got = await rawGet(path);
      expect(got.body, path).toContain('<div id="root">');
      expect(got.body, path).not.toContain('"name"');
    }
  });

  it("leaves other methods to the /v2 door's 404", async () => {
    const res = await fetch(`${s.url}/console/apis`, { method: "POST" });
    expect(res.status).toBe(404);
  });
});

describe("a server without a console build", () => {
  const empty = mkdtempSync(join(tmpdir(), "latchkey-no-console-"));
  const files = createConsoleFiles([empty]);
  const server = createServer((req, res) => {
    if (!files(req, res)) res.writeHead(418).end();
  });
  beforeAll(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", r)));
  afterAll(() => {
    server.close();
    rmSync(empty, { recursive: true, force: true });
  });

  it("answers 503 saying how to build it", async () => {
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/console/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("npm run build");
  });
});
