import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { LivenessService } from "../../gen/latchkey/v2/liveness_pb.js";
import { catalog } from "../../src/errors/catalog.js";
import { ServiceError } from "../../src/errors/service-error.js";
import { callOf, callValues, principalOf } from "../../src/services/call.js";
import { creditsHolder } from "../../src/services/keys/credits-holder.js";
import { mutate } from "../../src/services/mutation.js";
import { keyFind } from "../../src/storage/queries/keys.js";
import { useServer } from "../harness/server.js";

// A broken invariant inside a request (no call on the context, no principal where
// authentication guaranteed one, a balance holder the schema guarantees) answers the
// catalog's internal error: a 500 whose public text is only "quote the request id", with the
// reason kept as the logged cause. The code throws it as such where the invariant breaks,
// rather than leaving a bare Error to the doors' last-resort conversion.

const s = useServer();

/** A handler context as a door makes it, holding `values`. */
function contextWith(values = createContextValues()) {
  return createHandlerContext({
    service: LivenessService,
    method: LivenessService.method.check,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://localhost/latchkey.v2.LivenessService/Check",
    contextValues: values,
  });
}

/** An unauthenticated call's context. */
const unauthenticated = () => contextWith(callValues({ requestId: "req_invariant", door: "json" }));

/** What `run` throws (or the rejection of what it returns). */
async function failureOf(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error("expected a failure");
}

function expectInternal(err: unknown, cause: string) {
  expect(err).toBeInstanceOf(ServiceError);
  const e = err as ServiceError;
  expect(e.entry).toBe(catalog.unexpectedError);
  expect(e.entry.status).toBe(500);
  expect(e.detail).toBe("An unexpected error occurred; quote the request id to support.");
  expect((e.cause as Error).message).toContain(cause);
}

describe("broken invariants inside a request are the catalog's internal error", () => {
  it("a context without a call is a 500 catalog error, not a bare TypeError", async () => {
    expectInternal(await failureOf(() => callOf(contextWith().values)), "no call in context");
  });

  it("asking an unauthenticated call for its principal is a 500 catalog error", async () => {
    expectInternal(await failureOf(() => principalOf(unauthenticated())), "unauthenticated");
  });

  it("a change made for an unauthenticated call is refused before it runs, as a 500 catalog error", async () => {
    let ran = false;
    const err = await failureOf(() =>
      mutate(s.app.deps, unauthenticated(), async () => {
        ran = true;
      }),
    );
    expectInternal(err, "without an authenticated principal");
    expect(ran).toBe(false);
  });

  it("a key whose balance holder cannot be found is a 500 catalog error", async () => {
    const { keyId } = await s.seed.key();
    const key = await keyFind(s.db, s.workspaceId, keyId);
    if (!key) throw new Error("seeded key not found");
    const orphan = { ...key, creditsKeyId: "key_no_such_holder" };
    const err = await failureOf(() => s.db.transaction((tx) => creditsHolder(tx, orphan)));
    expectInternal(err, "key_no_such_holder");
    expect((err as ServiceError).detail).not.toContain("key_no_such_holder");
  });
});
