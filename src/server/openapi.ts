import { readFile } from "node:fs/promises";

/**
 * The OpenAPI 3.1 document of the /v2 door, written by `buf generate` (our protoc plugin,
 * scripts/protoc-gen-openapi.ts). Found relative to this module: from src/server/ it is
 * gen/openapi/, from dist/src/server/ it is dist/gen/openapi/, where `npm run build` copies it.
 */
export const OPENAPI_DOCUMENT_URL = new URL(
  "../../gen/openapi/latchkey.openapi.json",
  import.meta.url,
);

let loaded: Promise<string> | undefined;

/** The OpenAPI document as JSON text, read on the first call and kept (a failed read is retried). */
export function openApiDocument(): Promise<string> {
  loaded ??= readFile(OPENAPI_DOCUMENT_URL, "utf8").catch((err: unknown) => {
    loaded = undefined;
    throw err;
  });
  return loaded;
}
