import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { load, YAML11_SCHEMA } from "js-yaml";
import { loadConfig } from "../../../src/config.js";
import { ADMIN_PATHS } from "../../../src/server/admin.js";

/** Readers of the deployment files under deploy/, for deploy-files.test.ts. */

export const ROOT = new URL("../../..", import.meta.url).pathname;

export function text(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

/** A parsed deployment file: free-form, read by the tests field by field. */
// biome-ignore lint/suspicious/noExplicitAny: deployment files are free-form documents
export type Doc = any;

/**
 * A YAML file as Compose and Kubernetes read it: YAML 1.1, so `<<` merge keys apply (the
 * YAML 1.2 core schema would keep `<<` as a plain key).
 */
export function yaml(path: string): Doc {
  return load(text(path), { schema: YAML11_SCHEMA });
}

/** Every environment variable the configuration reads: loadConfig run on an env that records. */
export function configVariables(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get(_, name) {
      if (typeof name === "string") read.add(name);
      return undefined;
    },
  });
  loadConfig(env);
  return read;
}

/** One Dockerfile instruction, continuation lines joined, comments dropped. */
export interface Instruction {
  keyword: string;
  args: string;
}

export function dockerfileInstructions(source: string): Instruction[] {
  const logical: string[] = [];
  let pending = "";
  for (const raw of source.split("\n")) {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(pending + line);
    pending = "";
  }
  return logical.map((line) => {
    const [keyword = "", ...rest] = line.split(/\s+/);
    return { keyword: keyword.toUpperCase(), args: rest.join(" ") };
  });
}

/** The instructions of the last stage (the image that runs). */
export function finalStage(instructions: Instruction[]): Instruction[] {
  const from = instructions.map((i) => i.keyword).lastIndexOf("FROM");
  return instructions.slice(from);
}

/** `KEY=VALUE KEY2="VALUE 2"` pairs, as ENV and systemd's Environment= write them. */
export function assignments(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) {
    out[m[1] as string] = (m[2] as string).replace(/^"(.*)"$/, "$1");
  }
  return out;
}

/** The `key=value` settings of one section of a systemd unit, in order (keys repeat). */
export function unitSection(source: string, section: string): [string, string][] {
  const out: [string, string][] = [];
  let current = "";
  for (const raw of source.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) current = header[1] as string;
    else if (current === section) {
      const at = line.indexOf("=");
      out.push([line.slice(0, at).trim(), line.slice(at + 1).trim()]);
    }
  }
  return out;
}

/** Compose's `${VAR:-default}` and `${VAR}` with nothing set: the default, or "". */
export function composeDefaults(value: string): string {
  return value.replace(
    /\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}/g,
    (_, fallback) => fallback ?? "",
  );
}

/** Whether a .dockerignore leaves `path` (relative to the context) out of the build context. */
export function dockerIgnores(source: string, path: string): boolean {
  const rules = source
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => ({ keep: l.startsWith("!"), pattern: globRegExp(l.replace(/^!/, "")) }));
  // A pattern that matches a directory leaves out everything in it.
  const prefixes = path.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"));
  let ignored = false;
  for (const rule of rules) {
    if (prefixes.some((p) => rule.pattern.test(p))) ignored = !rule.keep;
  }
  return ignored;
}

function globRegExp(glob: string): RegExp {
  const body = glob
    .replace(/^\/+|\/+$/g, "")
    .split(/(\*\*|\*|\?)/)
    .map((part) =>
      part === "**"
        ? ".*"
        : part === "*"
          ? "[^/]*"
          : part === "?"
            ? "[^/]"
            : part.replace(/[.+^${}()|[\]\\]/g, "\\$&"),
    )
    .join("");
  return new RegExp(`^${body}$`);
}

const packageJson = (dir: string): Doc =>
  JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));

/**
 * Why `rest`, a path inside an install's node_modules (`.bin/node`,
 * `latchkey/dist/src/cli/main.js`), would be missing after `npm install latchkey-<v>.tgz`;
 * undefined when it will be there.
 */
export function missingFromInstall(rest: string): string | undefined {
  const pkg = packageJson(ROOT);
  const dependencies = Object.keys(pkg.dependencies ?? {});
  if (rest.startsWith(".bin/")) {
    const name = rest.slice(".bin/".length);
    if (Object.hasOwn(pkg.bin ?? {}, name)) return undefined;
    const provider = dependencies.find((dep) => {
      const bin = packageJson(join(ROOT, "node_modules", dep)).bin;
      return typeof bin === "string" ? dep === name : Object.hasOwn(bin ?? {}, name);
    });
    return provider ? undefined : `no dependency of the package has a bin named ${name}`;
  }
  const [top, ...inside] = rest.split("/");
  if (top !== pkg.name) {
    return dependencies.includes(top as string) ? undefined : `${top} is not a dependency`;
  }
  const path = inside.join("/");
  const files: string[] = pkg.files ?? [];
  if (!files.some((f) => !f.startsWith("!") && (path === f || path.startsWith(`${f}/`)))) {
    return `${path} is outside package.json "files"`;
  }
  // dist/ is compiled at packing time: its source must exist.
  if (path.startsWith("dist/")) {
    const source = path.slice("dist/".length).replace(/\.js$/, ".ts");
    return existsSync(join(ROOT, source)) ? undefined : `${path} has no source ${source}`;
  }
  return existsSync(join(ROOT, path)) ? undefined : `${path} does not exist`;
}

/** Paths into an install's node_modules written in a file: `.../node_modules/<rest>`. */
export function installPaths(source: string): { prefix: string; rest: string }[] {
  return [...source.matchAll(/(\/[\w.@/-]*?)\/node_modules\/([\w.@/-]+)/g)].map((m) => ({
    prefix: m[1] as string,
    rest: m[2] as string,
  }));
}

/** Whether the admin port answers GET at this path (/metrics and the health endpoints). */
export function adminServesGet(path: string): boolean {
  return (ADMIN_PATHS as readonly string[]).includes(path);
}
