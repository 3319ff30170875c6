// The scenarios measure the built server (dist/, `npm run build`). Its modules are loaded at
// run time and typed as their sources, so that bench/ typechecks without a build.
import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The project's root directory. */
export const projectRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Loads `dist/<path>` (a .js file of the build) typed as `T`, its source's module type. */
export async function fromDist<T>(path: string): Promise<T> {
  return (await import(new URL(`../../dist/${path}`, import.meta.url).href)) as T;
}

/** When dist/ was last built (ISO time), or null without a build. */
export function distBuiltAt(): string | null {
  try {
    return statSync(new URL("../../dist/src/app.js", import.meta.url)).mtime.toISOString();
  } catch {
    return null;
  }
}
