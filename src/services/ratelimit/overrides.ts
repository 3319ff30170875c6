import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteOverrideRequest,
  DeleteOverrideResponseSchema,
  GetOverrideRequest,
  GetOverrideResponseSchema,
  ListOverridesRequest,
  ListOverridesResponseSchema,
  OverrideSchema,
  SetOverrideRequest,
  SetOverrideResponseSchema,
} from "../../../gen/latchkey/v2/ratelimit_pb.js";
import { newId } from "../../domain/ids.js";
import { matchOverride } from "../../domain/overrides.js";
import { errors } from "../../errors/service-error.js";
import {
  type OverrideRow,
  overrideDelete,
  overrideList,
  overrideUpsert,
} from "../../storage/queries/ratelimit-namespaces.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { toPage } from "../pagination.js";
import { existingNamespace } from "./namespaces.js";

/** Page size of listOverrides when none is given (the public spec's default). */
const DEFAULT_OVERRIDES_PAGE = 10;

function toOverrideMessage(o: OverrideRow): MessageInitShape<typeof OverrideSchema> {
  return {
    overrideId: o.id,
    identifier: o.identifier,
    limit: BigInt(o.limit),
    duration: BigInt(o.durationMs),
  };
}

/** Creates or replaces an identifier's override (a deleted one is revived with its id). */
export async function setOverride(
  deps: Deps,
  req: SetOverrideRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof SetOverrideResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const { namespace } = await existingNamespace(deps, workspaceId, req.namespace);
  authorize(ctx, { namespaceId: namespace.id });
  const id = await mutate(deps, ctx, async (tx, change) => {
    const row = {
      id: newId("rlor"),
      workspaceId,
      namespaceId: namespace.id,
      identifier: req.identifier,
      limit: Number(req.limit),
      durationMs: Number(req.duration),
      createdAt: change.now,
    };
    const result = await overrideUpsert(tx, row, change.now);
    change.audit({
      event: "ratelimit.set_override",
      resourceType: "ratelimitOverride",
      resourceId: result.id,
      description: `Set override ${req.identifier} of namespace ${namespace.name} to ${req.limit} per ${req.duration} ms.`,
    });
    change.invalidate({ kind: "namespace", workspaceId, id: namespace.id });
    return result.id;
  });
  return { data: { overrideId: id } };
}

/** The override that applies to an identifier: exact, else the most specific wildcard. */
export async function getOverride(
  deps: Deps,
  req: GetOverrideRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof GetOverrideResponseSchema>> {
  const entry = await existingNamespace(deps, principalOf(ctx).workspaceId, req.namespace);
  const override = matchOverride(entry.overrides, req.identifier);
  if (!override) throw errors.overrideNotFound();
  authorize(ctx, { namespaceId: entry.namespace.id });
  return { data: toOverrideMessage(override) };
}

/** One page of a namespace's overrides by id. */
export async function listOverrides(
  deps: Deps,
  req: ListOverridesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListOverridesResponseSchema>> {
  const { namespace } = await existingNamespace(deps, principalOf(ctx).workspaceId, req.namespace);
  authorize(ctx, { namespaceId: namespace.id });
  const limit = req.limit ?? DEFAULT_OVERRIDES_PAGE;
  const rows = await overrideList(deps.db, namespace.id, { cursor: req.cursor, limit: limit + 1 });
  const { items, pagination } = toPage(rows, limit);
  return { data: items.map(toOverrideMessage), pagination };
}

/** Deletes the override with exactly this identifier (patterns are matched literally). */
export async function deleteOverride(
  deps: Deps,
  req: DeleteOverrideRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof DeleteOverrideResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const { namespace } = await existingNamespace(deps, workspaceId, req.namespace);
  authorize(ctx, { namespaceId: namespace.id });
  await mutate(deps, ctx, async (tx, change) => {
    const id = await overrideDelete(tx, namespace.id, req.identifier, change.now);
    if (!id) throw errors.overrideNotFound();
    change.audit({
      event: "ratelimit.delete_override",
      resourceType: "ratelimitOverride",
      resourceId: id,
      description: `Deleted override ${req.identifier} of namespace ${namespace.name}.`,
    });
    change.invalidate({ kind: "namespace", workspaceId, id: namespace.id });
  });
  return { data: {} };
}
