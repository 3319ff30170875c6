import { hash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { catalogEntries } from "../errors/catalog.js";
import { explanations } from "../errors/explanations.js";
import type { NodeRequest, NodeResponse } from "./node-io.js";
import { PAGE_HEADERS } from "./page-headers.js";

/** A GET page: status, content type and body, and its Content-Security-Policy if not the default. */
interface Page {
  status: number;
  type: string;
  body: string | Buffer;
  cache?: string;
  csp?: string;
}

/** Files of the API reference renderer (swagger-ui-dist, from our own node_modules). */
const RENDERER_FILES: Readonly<Record<string, string>> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};
const rendererDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const PAGE_STYLE = `body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#1d1d1f}
code{background:#f2f2f5;padding:.1rem .3rem;border-radius:4px}a{color:#0b57d0}table{border-collapse:collapse}
td,th{padding:.25rem .75rem;border-bottom:1px solid #ddd;text-align:left}`;

const html = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style></head>
<body>${body}</body></html>`;

/**
 * Content-Security-Policies. Pages load nothing from elsewhere, run no inline script and
 * cannot be framed (clickjacking): an injected script could read the root key a user types
 * into /docs, so only our own files may run there. Swagger UI sets styles through the DOM
 * (allowed) and draws icons from data: URIs; "Try it out" calls this server only.
 */
const CSP_DEFAULT =
  "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
const CSP_ERROR_PAGES = `${CSP_DEFAULT}; style-src 'sha256-${hash("sha256", PAGE_STYLE, "base64")}'`;
const CSP_DOCS = `${CSP_DEFAULT}; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Escapes text and turns `backticks` into code spans. */
function prose(s: string): string {
  return escapeHtml(s).replace(/`([^`]+)`/g, "<code>$1</code>");
}

function errorPage(category: string, name: string): Page {
  const entry = catalogEntries.find((e) => e.category === category && e.name === name);
  const text = explanations[`${category}/${name}`];
  if (!entry || !text) {
    return {
      status: 404,
      type: "text/html; charset=utf-8",
      csp: CSP_ERROR_PAGES,
      body: html(
        "Unknown error",
        `<h1>Unknown error</h1><p>Latchkey has no error <code>${escapeHtml(`${category}/${name}`)}</code>. <a href="/api-reference/errors-v2">All errors</a>.</p>`,
      ),
    };
  }
  return {
    status: 200,
    type: "text/html; charset=utf-8",
    csp: CSP_ERROR_PAGES,
    body: html(
      `${entry.code} · Latchkey`,
      `<p><a href="/api-reference/errors-v2">All errors</a></p>
<h1><code>${escapeHtml(entry.code)}</code></h1>
<p>HTTP ${entry.status} ${escapeHtml(entry.title)} on the /v2 JSON door; Connect and gRPC code <code>${escapeHtml(connectCodeName(entry.connectCode))}</code>.</p>
<h2>What it means</h2><p>${prose(text.meaning)}</p>
<h2>How to fix it</h2><p>${prose(text.fix)}</p>
<p>Every error answer carries <code>meta.requestId</code>; quote it when you report a problem.</p>`,
    ),
  };
}

function errorIndex(): Page {
  const rows = catalogEntries
    .map(
      (e) =>
        `<tr><td><a href="/api-reference/errors-v2/svc/${e.category}/${e.name}"><code>${escapeHtml(e.code)}</code></a></td><td>${e.status}</td><td>${prose(explanations[`${e.category}/${e.name}`]?.meaning ?? "")}</td></tr>`,
    )
    .join("\n");
  return {
    status: 200,
    type: "text/html; charset=utf-8",
    csp: CSP_ERROR_PAGES,
    body: html(
      "Errors · Latchkey",
      `<h1>Latchkey errors</h1><p>Every error answer's <code>type</code> links to its page here.</p><table><tr><th>code</th><th>status</th><th>meaning</th></tr>${rows}</table>`,
    ),
  };
}

function docsPage(): Page {
  return {
    status: 200,
    type: "text/html; charset=utf-8",
    csp: CSP_DOCS,
    body: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Latchkey API reference</title>
<link rel="icon" href="/docs/assets/favicon-32x32.png"><link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`,
  };
}

/**
 * Starts Swagger UI. The root key a user authorizes with lives in the page's memory only:
 * not persisted (persistAuthorization would put it in localStorage, where any script of this
 * origin and anyone at the browser later could read it), and a copy an earlier version
 * persisted is removed. No validator badge: nothing is fetched from elsewhere.
 */
const DOCS_INIT = `try { window.localStorage.removeItem("authorized"); } catch (e) {}
window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true, persistAuthorization: false, validatorUrl: null });
`;

/** The OpenAPI document, when the server has one to serve. */
export type OpenApiSource = () => Promise<string>;

/**
 * GET pages beside the procedures: the API reference (`/docs`, rendered by swagger-ui from
 * `/openapi.json`), and one page per error code under `/api-reference/errors-v2/`, where every
 * error `type` URL leads. Returns false when the request is not for a page.
 */
export function createPages(openapi?: OpenApiSource) {
  const assets = new Map<string, Buffer>();
  const asset = async (file: string, type: string): Promise<Page> => {
    let body = assets.get(file);
    if (!body) {
      body = await readFile(join(rendererDir, file));
      assets.set(file, body);
    }
    return { status: 200, type, body, cache: "public, max-age=86400" };
  };
  const route = async (path: string): Promise<Page | undefined> => {
    if (path === "/docs" || path === "/docs/") return docsPage();
    if (path === "/docs/init.js")
      return { status: 200, type: "text/javascript; charset=utf-8", body: DOCS_INIT };
    const file = /^\/docs\/assets\/([\w.-]+)$/.exec(path)?.[1];
    if (file !== undefined) {
      // Own names only: `constructor` or `toString` would find Object.prototype's members.
      const type = Object.hasOwn(RENDERER_FILES, file) ? RENDERER_FILES[file] : undefined;
      return type ? asset(file, type) : undefined;
    }
    if (path === "/openapi.json" && openapi)
      return { status: 200, type: "application/json", body: await openapi() };
    if (path === "/api-reference/errors-v2" || path === "/api-reference/errors-v2/")
      return errorIndex();
    const m = /^\/api-reference\/errors-v2\/svc\/([a-z_]+)\/([a-z_]+)$/.exec(path);
    if (m) return errorPage(m[1] as string, m[2] as string);
    return undefined;
  };
  /** Answers a GET for a page; false when the path is not a page. */
  return (req: NodeRequest, res: NodeResponse): boolean => {
    if (req.method !== "GET") return false;
    const path = (req.url ?? "/").split("?")[0] as string;
    if (!isPagePath(path)) return false;
    route(path).then(
      (page) => {
        const p = page ?? { status: 404, type: "text/plain; charset=utf-8", body: "not found\n" };
        (res as ServerResponse).writeHead(p.status, {
          "content-type": p.type,
          "content-length": Buffer.byteLength(p.body),
          ...(p.cache ? { "cache-control": p.cache } : {}),
          "content-security-policy": p.csp ?? CSP_DEFAULT,
          ...PAGE_HEADERS,
        });
        res.end(p.body);
      },
      () => {
        (res as ServerResponse).writeHead(500, {
          "content-type": "text/plain; charset=utf-8",
          "content-security-policy": CSP_DEFAULT,
          ...PAGE_HEADERS,
        });
        res.end("page failed\n");
      },
    );
    return true;
  };
}

function isPagePath(path: string): boolean {
  return path === "/openapi.json" || path.startsWith("/docs") || path.startsWith("/api-reference/");
}

const CONNECT_CODES = [
  "canceled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

function connectCodeName(code: number): string {
  return CONNECT_CODES[code - 1] ?? String(code);
}
