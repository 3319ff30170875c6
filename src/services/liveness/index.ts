import type { ServiceImpl } from "@connectrpc/connect";
import type { LivenessService } from "../../../gen/latchkey/v2/liveness_pb.js";
import { check } from "./check.js";

/** The LivenessService implementation. */
export function livenessService(): ServiceImpl<typeof LivenessService> {
  return { check };
}
