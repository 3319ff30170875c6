import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  UpdateApiRequest,
  UpdateApiResponseSchema,
} from "../../../gen/latchkey/v2/apis_pb.js";
import { storedCidrs } from "../../domain/networks.js";
import { errors, type Violation } from "../../errors/service-error.js";
import { type ApiChanges, apiUpdate } from "../../storage/queries/apis.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { updates } from "../update-mask.js";
import { namedKeyFormat, namedLeakPolicy, toApiMessage } from "./api-view.js";
import { findApi } from "./find-api.js";

/**
 * Changes the settings of an API: an omitted field is left alone, a value sets it, and
 * `allowedCidrs` cleared (null or [] on /v2, masked and empty over gRPC) removes the API's
 * ranges. The name, the key format and the leak policy cannot be cleared. The change is
 * audited as api.update and reaches every node's cached verifications at once; a request
 * that changes nothing writes nothing. Answers the API as it is afterwards.
 */
export async function updateApi(
  deps: Deps,
  req: UpdateApiRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof UpdateApiResponseSchema>> {
  const changes = changesOf(req);
  const { workspaceId } = principalOf(ctx);
  const found = await findApi(deps, workspaceId, req.apiId);
  authorize(ctx, { apiId: found.id });
  const fields = Object.keys(changes);
  if (fields.length === 0) return { data: toApiMessage(found) };
  const updated = await mutate(deps, ctx, async (tx, change) => {
    const api = await apiUpdate(tx, workspaceId, found.id, changes, change.now);
    // Deleted since it was found: as absent as if it had been deleted first.
    if (!api) throw errors.apiNotFound();
    change.audit({
      event: "api.update",
      resourceType: "api",
      resourceId: api.id,
      description: `Updated ${fields.join(", ")} of API ${api.id}.`,
    });
    // Its cached row (getApi) and its keys' cached verification records, which carry the
    // API's network ranges, on every node.
    change.invalidate({ kind: "api", workspaceId, id: api.id });
    return api;
  });
  return { data: toApiMessage(updated) };
}

/**
 * The settings the request changes, those of its mask (or without one those it sets),
 * checked: a setting that cannot be cleared must be given, and an enum must name a value.
 * Every bad field is named at once (400).
 */
function changesOf(req: UpdateApiRequest): ApiChanges {
  const mask = req.updateMask;
  const bad: Violation[] = [];
  const changes: ApiChanges = {};
  if (updates(mask, "name", req.name !== undefined)) {
    if (req.name === undefined) bad.push({ location: "/name", message: "must not be null" });
    else changes.name = req.name;
  }
  if (updates(mask, "key_format", req.keyFormat !== undefined)) {
    const keyFormat = namedKeyFormat(req.keyFormat);
    if (keyFormat) changes.keyFormat = keyFormat;
    else bad.push(enumViolation("/keyFormat", req.keyFormat, "plain, checksummed"));
  }
  if (updates(mask, "leak_policy", req.leakPolicy !== undefined)) {
    const leakPolicy = namedLeakPolicy(req.leakPolicy);
    if (leakPolicy) changes.leakPolicy = leakPolicy;
    else bad.push(enumViolation("/leakPolicy", req.leakPolicy, "revoke, disable, notify"));
  }
  if (updates(mask, "allowed_cidrs", req.allowedCidrs.length > 0)) {
    changes.allowedCidrs = storedCidrs(req.allowedCidrs);
  }
  if (bad.length > 0) throw errors.invalidInput(bad);
  return changes;
}

/** Null for a masked enum left unset; the values it may take for one set to no value. */
function enumViolation(location: string, value: number | undefined, allowed: string): Violation {
  return {
    location,
    message: value === undefined ? "must not be null" : `must be one of: ${allowed}`,
  };
}
