import { exampleOf, IDS } from "./examples/index.ts";

/** A request body of the examples as one line of JSON, for the quickstart. */
function body(procedure: string): string {
  return JSON.stringify(exampleOf(procedure).request);
}

/**
 * The introduction of the API reference (`info.description`, Markdown): what Latchkey is,
 * how to authenticate, the shape of answers and errors, and a first session. Written for
 * the people who call the API; its quickstart bodies are the documented examples.
 */
export function introduction(): string {
  return `Latchkey issues API keys for your API and checks them for you. You create an API, create a key for each of your users, and when one of them calls you, you ask Latchkey whether their key is valid and what it may do: its permissions, roles, remaining credits and rate limits.

## Authentication

Send a root key on every call: \`Authorization: Bearer <root key>\`. On its first start an instance creates one root key that may do everything, and prints it once (or writes it to a file when its output is not a terminal). On this page, press **Authorize** and paste it; the page keeps it in memory only. Two procedures need no root key: \`liveness.check\`, and \`keys.verifyKey\` when it names the API the key belongs to (\`apiId\`).

## Requests and answers

Every procedure is \`POST /v2/{namespace}.{procedure}\` with a JSON body, for example \`POST /v2/keys.createKey\`. Fields are lowerCamel; an unknown field, a snake_case name, a string where a number belongs or an integer beyond 2^53-1 is refused. \`null\` clears a field that may be cleared; an update changes the fields present in its body and nothing else. Every answer is an envelope: \`meta.requestId\` (also the \`x-request-id\` header), then \`data\`, and \`pagination\` on lists (pass \`pagination.cursor\` as \`cursor\` for the next page).

## Errors

An error answers a 4xx or 5xx status with an \`error\` instead of \`data\`:

\`\`\`json
{
  "meta": { "requestId": "${IDS.requestId}" },
  "error": {
    "title": "Not Found",
    "status": 404,
    "detail": "The specified key was not found.",
    "type": "/api-reference/errors-v2/svc/data/key_not_found"
  }
}
\`\`\`

\`type\` opens a page that explains the error and how to fix it ([all errors](/api-reference/errors-v2)). A 400 also lists what is wrong in \`errors\`, each with the \`location\` of the field and a \`message\`. Quote \`meta.requestId\` when you report a problem.

## Quickstart

1. **Create an API**, a group of keys: \`apis.createApi\` with \`${body("apis.createApi")}\` answers \`data.apiId\`.
2. **Create a key** for one of your users: \`keys.createKey\` with at least \`{"apiId": "<apiId>"}\` answers \`data.key\`, the secret to hand to your user (it is not stored and cannot be shown again), and \`data.keyId\`, to manage the key later.
3. **Verify the key** when your user calls you: \`keys.verifyKey\` with \`{"key": "<key>"}\` answers \`data.valid\` and, when it is not valid, a \`data.code\` such as \`EXPIRED\` or \`RATE_LIMITED\`.

\`\`\`sh
curl -X POST "$LATCHKEY_URL/v2/apis.createApi" \\
  -H "Authorization: Bearer $ROOT_KEY" -H "Content-Type: application/json" \\
  -d '${body("apis.createApi")}'
\`\`\`

Each procedure below shows an example request (it fills **Try it out**) and its answer. The examples are one session on a fresh instance: they create an API first (\`${IDS.apiId}\`), then the permission \`forecast.read\`, the role \`forecast-reader\`, the identity \`acme_corp\` and a key for it (\`${IDS.keyId}\`), use them, and delete them last. To run one, create what it names first and put the ids your answers gave you in place of the example's.`;
}
