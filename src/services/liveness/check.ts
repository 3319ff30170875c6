import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CheckResponseSchema } from "../../../gen/latchkey/v2/liveness_pb.js";

/** Answers that the process is alive. It touches no backing service on purpose. */
export function check(): MessageInitShape<typeof CheckResponseSchema> {
  return { data: { message: "Latchkey is alive." } };
}
