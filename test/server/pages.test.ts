import { describe, expect, it } from "vitest";
import { catalogEntries, errorTypeUrl } from "../../src/errors/catalog.js";
import { explanations } from "../../src/errors/explanations.js";
import { useServer } from "../harness/server.js";

const s = useServer();

describe("error pages", () => {
  it("explain every error of the catalog", () => {
    const missing = catalogEntries.filter((e) => !explanations[`${e.category}/${e.name}`]);
    expect(missing.map((e) => e.code)).toEqual([]);
  });

  it.each(catalogEntries.map((e) => [e.code, e]))("%s has a page", async (_, entry) => {
    const url = errorTypeUrl(s.url, entry);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const page = await res.text();
    expect(page).toContain(entry.code);
    expect(page).toContain("How to fix it");
  });

  it("the type URL of a real error answer leads to its page", async () => {
    const res = await s.call("json", "apis.getApi", { apiId: "api_missing000000" });
    expect(res.status).toBe(404);
    // A relative reference (no DOCS_URL), resolved against the URL called, as RFC 9457 says.
    const page = await fetch(new URL(res.error?.type as string, `${s.url}/v2/apis.getApi`));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("err:svc:data:api_not_found");
  });

  it("lists every error on the index", async () => {
    const res = await fetch(`${s.url}/api-reference/errors-v2`);
    const page = await res.text();
    for (const e of catalogEntries) expect(page).toContain(e.code);
  });

  it("answers an unknown code with a 404 page", async () => {
    const res = await fetch(`${s.url}/api-reference/errors-v2/svc/data/nothing_like_this`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("Unknown error");
  });
});

describe("the API reference page", () => {
  it("serves /docs and the renderer's files from node_modules", async () => {
    const page = await fetch(`${s.url}/docs`);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain("/docs/assets/swagger-ui-bundle.js");
    for (const [file, type] of [
      ["swagger-ui-bundle.js", "text/javascript"],
      ["swagger-ui.css", "text/css"],
      ["favicon-32x32.png", "image/png"],
    ]) {
      const res = await fetch(`${s.url}/docs/assets/${file}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain(type);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(500);
    }
    expect((await fetch(`${s.url}/docs/assets/../package.json`)).status).toBe(404);
    expect((await fetch(`${s.url}/docs/assets/index.html`)).status).toBe(404);
  });

  it("leaves POST to the procedures: POST /docs is a 404 envelope", async () => {
    const res = await s.raw("/docs", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(404);
    expect(res.body.error.type).toContain("route_not_found");
  });
});

describe("page headers", () => {
  it("send a Content-Security-Policy, nosniff, no referrer and no framing on every page", async () => {
    const paths = [
      "/docs",
      "/docs/init.js",
      "/docs/assets/swagger-ui.css",
      "/docs/assets/nothing.js",
      "/openapi.json",
      "/api-reference/errors-v2",
      "/api-reference/errors-v2/svc/data/api_not_found",
    ];
    for (const path of paths) {
      const res = await fetch(`${s.url}${path}`);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(res.headers.get("referrer-policy"), path).toBe("no-referrer");
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
    }
    const docs = await fetch(`${s.url}/docs`);
    expect(docs.headers.get("content-security-policy")).toContain("script-src 'self'");
    // The docs page runs no inline script: the CSP would refuse it.
    expect(await docs.text()).not.toMatch(/<script>|<script [^>]*>[^<]/);
  });

  it("never persist the root key a user authorizes with on /docs", async () => {
    const init = await (await fetch(`${s.url}/docs/init.js`)).text();
    expect(init).toContain("persistAuthorization: false");
    expect(init).not.toContain("persistAuthorization: true");
    // A key an earlier version persisted is removed.
    expect(init).toContain('localStorage.removeItem("authorized")');
  });
});
