import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ApiSchema } from "../../../gen/latchkey/v2/apis_pb.js";
import type { ApiRow } from "../../storage/queries/apis.js";

/** An API as reads return it: its network ranges only when it has some. */
export function toApiMessage(a: ApiRow): MessageInitShape<typeof ApiSchema> {
  return { id: a.id, name: a.name, allowedCidrs: a.allowedCidrs ?? [] };
}
