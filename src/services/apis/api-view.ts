import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type ApiSchema,
  KeyFormat as KeyFormatEnum,
  LeakPolicy as LeakPolicyEnum,
} from "../../../gen/latchkey/v2/apis_pb.js";
import type { KeyFormat } from "../../domain/key-format.js";
import { DEFAULT_LEAK_POLICY, type LeakPolicy } from "../../domain/leaks.js";
import type { ApiRow } from "../../storage/queries/apis.js";

/** The format an API gets when its request names none: checksummed, for every new API. */
export const DEFAULT_KEY_FORMAT: KeyFormat = "checksummed";

const FORMATS: Record<KeyFormat, KeyFormatEnum> = {
  plain: KeyFormatEnum.PLAIN,
  checksummed: KeyFormatEnum.CHECKSUMMED,
};

const POLICIES: Record<LeakPolicy, LeakPolicyEnum> = {
  revoke: LeakPolicyEnum.REVOKE,
  disable: LeakPolicyEnum.DISABLE,
  notify: LeakPolicyEnum.NOTIFY,
};

/** The stored format a request asks for; omitted or unspecified is the default. */
export function keyFormatOf(value: KeyFormatEnum | undefined): KeyFormat {
  if (value === KeyFormatEnum.PLAIN) return "plain";
  return DEFAULT_KEY_FORMAT;
}

/** The stored policy a request asks for; omitted or unspecified is the default. */
export function leakPolicyOf(value: LeakPolicyEnum | undefined): LeakPolicy {
  switch (value) {
    case LeakPolicyEnum.REVOKE:
      return "revoke";
    case LeakPolicyEnum.NOTIFY:
      return "notify";
    case LeakPolicyEnum.DISABLE:
      return "disable";
    default:
      return DEFAULT_LEAK_POLICY;
  }
}

/** An API as reads return it: its network ranges only when it has some. */
export function toApiMessage(api: ApiRow): MessageInitShape<typeof ApiSchema> {
  return {
    id: api.id,
    name: api.name,
    keyFormat: FORMATS[api.keyFormat],
    leakPolicy: POLICIES[api.leakPolicy],
    allowedCidrs: api.allowedCidrs ?? [],
  };
}
