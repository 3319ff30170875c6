import type { FieldMask } from "@bufbuild/protobuf/wkt";

/**
 * Whether an update request changes `field` (its proto name). With a mask (the /v2 door
 * always derives one from the keys present; gRPC and Connect callers should send one),
 * the mask decides, so a masked field that is unset means "clear". Without a mask, a
 * field changes when it is set (`setWithoutMask`), and nothing can be cleared.
 */
export function updates(
  mask: FieldMask | undefined,
  field: string,
  setWithoutMask: boolean,
): boolean {
  if (mask && mask.paths.length > 0) return mask.paths.includes(field);
  return setWithoutMask;
}
