import type { MessageInitShape } from "@bufbuild/protobuf";
import type { OverrideSchema } from "../../../gen/latchkey/v2/ratelimit_pb.js";
import type { OverrideRow } from "../../storage/queries/ratelimit-namespaces.js";

/** An override as the override procedures answer it (its window in milliseconds). */
export function toOverrideMessage(o: OverrideRow): MessageInitShape<typeof OverrideSchema> {
  return {
    overrideId: o.id,
    identifier: o.identifier,
    limit: BigInt(o.limit),
    duration: BigInt(o.durationMs),
  };
}
