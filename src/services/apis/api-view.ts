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

/** The stored format an enum value names; undefined for unspecified or an unknown number. */
export function namedKeyFormat(value: KeyFormatEnum | undefined): KeyFormat | undefined {
  if (value === KeyFormatEnum.PLAIN) return "plain";
  if (value === KeyFormatEnum.CHECKSUMMED) return "checksummed";
  return undefined;
}

/** The stored policy an enum value names; undefined for unspecified or an unknown number. */
export function namedLeakPolicy(value: LeakPolicyEnum | undefined): LeakPolicy | undefined {
  switch (value) {
    case LeakPolicyEnum.REVOKE:
      return "revoke";
    case LeakPolicyEnum.NOTIFY:
      return "notify";
    case LeakPolicyEnum.DISABLE:
      return "disable";
    default:
      return undefined;
  }
}

/** The stored format a request asks for; omitted or unspecified is the default. */
export function keyFormatOf(value: KeyFormatEnum | undefined): KeyFormat {
  return namedKeyFormat(value) ?? DEFAULT_KEY_FORMAT;
}

/** The stored policy a request asks for; omitted or unspecified is the default. */
export function leakPolicyOf(value: LeakPolicyEnum | undefined): LeakPolicy {
  return namedLeakPolicy(value) ?? DEFAULT_LEAK_POLICY;
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
