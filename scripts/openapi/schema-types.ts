/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
export type Schema = { [keyword: string]: unknown };

/**
 * Requests and responses of one message differ on the /v2 door: requests refuse unknown
 * keys and null (except on nullable fields) and carry the bounds of `(latchkey.v2.rules)`;
 * responses omit unset optional fields and empty lists unless the field says otherwise.
 */
export type Direction = "request" | "response";
