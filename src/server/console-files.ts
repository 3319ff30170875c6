import { hash, randomBytes } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { NodeRequest, NodeResponse } from "./node-io.js";
import { PAGE_HEADERS } from "./page-headers.js";

/**
 * Where the console's built files are: `dist/console` beside the compiled server (what the
 * package ships), else, when the server runs from its TypeScript source, the console
 * package's own build output.
 */
const CANDIDATE_DIRS = [
  fileURLToPath(new URL("../../console/", import.meta.url)),
  fileURLToPath(new URL("../../packages/console/dist/", import.meta.url)),
];

/**
 * The console's Content-Security-Policy: its own files only (scripts, styles, fonts and
 * images from this origin, calls to this origin), no inline script, no framing, no plugins,
 * and no form posting anywhere (the sign-in is a fetch, not a form submission). The entry
 * page adds one style nonce (see NONCE_PLACEHOLDER).
 */
export const CSP_CONSOLE =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * What the build writes where the entry page's nonce goes. The dialogs' scroll lock inserts a
 * style element at run time whose text depends on the scrollbar's width, so no hash can
 * allow it; a nonce made fresh for each answer of the entry page (and allowed for styles
 * only, never scripts) lets exactly the elements the console's code makes apply.
 */
const NONCE_PLACEHOLDER = "LATCHKEY_CSP_NONCE";

/**
 * The style elements Radix's scroll areas and selects render, whose text is fixed (they hide
 * the native scrollbar): allowed by hash, as these components take no nonce from the themes
 * around them. A version of Radix that changes them fails the console's browser test, which
 * counts CSP refusals.
 */
const FIXED_STYLES = ["scroll-area", "select"].map(
  (part) =>
    `[data-radix-${part}-viewport]{scrollbar-width:none;-ms-overflow-style:none;-webkit-overflow-scrolling:touch;}[data-radix-${part}-viewport]::-webkit-scrollbar{display:none}`,
);
const FIXED_STYLE_HASHES = FIXED_STYLES.map((t) => `'sha256-${hash("sha256", t, "base64")}'`);

/** The entry page's CSP, allowing the style elements that carry `nonce` and the fixed ones. */
export function entryPageCsp(nonce: string): string {
  return CSP_CONSOLE.replace(
    "style-src 'self'",
    `style-src 'self' 'nonce-${nonce}' ${FIXED_STYLE_HASHES.join(" ")}`,
  );
}

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".ico": "image/x-icon",
};
/** Vite names built assets `<name>-<hash>.<ext>`: their content never changes under a name. */
const IMMUTABLE = "public, max-age=31536000, immutable";
/** The entry page names the current assets, so it is revalidated on every load. */
const REVALIDATE = "no-cache";
/** A path's file part: letters, digits, dots, dashes and underscores (no `..`, no slashes). */
const ASSET_PATH = /^\/console\/assets\/([\w-]+(?:\.[\w-]+)*)$/;

interface File {
  body: Buffer;
  type: string;
}

/**
 * Serves the console under /console: `/console/assets/<file>` from the build's assets
 * (immutable), every other `/console` path the entry page (the app routes in the browser),
 * with the console's CSP. A missing build answers 503 saying how to build it. `/console/api/`
 * is the session endpoints' (see console-session-routes.ts). False when the path is not the
 * console's.
 */
export function createConsoleFiles(dirs: readonly string[] = CANDIDATE_DIRS) {
  const cache = new Map<string, File | null>();
  let root: Promise<string | undefined> | undefined;
  const findRoot = () => {
    root ??= (async () => {
      for (const dir of dirs) {
        if (
          await stat(join(dir, "index.html")).then(
            (s) => s.isFile(),
            () => false,
          )
        )
          return dir;
      }
      root = undefined; // a build made later is found by the next request
      return undefined;
    })();
    return root;
  };
  const load = async (dir: string, relative: string): Promise<File | null> => {
    const cached = cache.get(relative);
    if (cached !== undefined) return cached;
    const type = TYPES[extname(relative)];
    const body = type ? await readFile(join(dir, relative)).catch(() => null) : null;
    const file = body && type ? { body, type } : null;
    // Only what exists is cached: the set of names is the build's, so this stays bounded.
    if (file) cache.set(relative, file);
    return file;
  };

  const answer = async (
    path: string,
  ): Promise<{ status: number; file: File; cache: string; csp?: string }> => {
    const dir = await findRoot();
    if (!dir) {
      const body = Buffer.from(
        "The console is not built: run `npm run build` (or `npm start`, which builds it).\n",
      );
      return { status: 503, file: { body, type: "text/plain; charset=utf-8" }, cache: "no-store" };
    }
    const asset = ASSET_PATH.exec(path)?.[1];
    if (asset !== undefined) {
      const file = await load(dir, join("assets", asset));
      if (file) return { status: 200, file, cache: IMMUTABLE };
      return {
        status: 404,
        file: { body: Buffer.from("not found\n"), type: "text/plain; charset=utf-8" },
        cache: "no-store",
      };
    }
    const index = await load(dir, "index.html");
    if (!index) throw new Error("the console's index.html went away");
    const nonce = randomBytes(18).toString("base64");
    const body = Buffer.from(index.body.toString("utf8").replaceAll(NONCE_PLACEHOLDER, nonce));
    return {
      status: 200,
      file: { body, type: index.type },
      cache: REVALIDATE,
      csp: entryPageCsp(nonce),
    };
  };

  return (req: NodeRequest, res: NodeResponse): boolean => {
    const path = (req.url ?? "/").split("?")[0] as string;
    if (path !== "/console" && !path.startsWith("/console/")) return false;
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    answer(path).then(
      ({ status, file, cache: cacheControl, csp }) => {
        (res as ServerResponse).writeHead(status, {
          "content-type": file.type,
          "content-length": file.body.length,
          "cache-control": cacheControl,
          "content-security-policy": csp ?? CSP_CONSOLE,
          ...PAGE_HEADERS,
        });
        if (req.method === "HEAD") res.end();
        else res.end(file.body);
      },
      () => {
        (res as ServerResponse).writeHead(500, {
          "content-type": "text/plain; charset=utf-8",
          "content-security-policy": CSP_CONSOLE,
          ...PAGE_HEADERS,
        });
        res.end("console file failed\n");
      },
    );
    return true;
  };
}
