import * as options from "../../gen/latchkey/v2/options_pb.js";
import * as fieldRules from "../../src/domain/field-rules.js";
import * as networks from "../../src/domain/networks.js";
import { errors } from "../../src/errors/service-error.js";
import * as presence from "../../src/server/presence.js";
import { type GenericCodecDeps, genericJsonCodec } from "./json-codec.js";
import { genericValidator } from "./validation.js";

/** The generic codec and validator over the sources' modules: the tests' oracle. */
const deps: GenericCodecDeps = {
  options,
  fieldRules,
  networks,
  presence,
  unexpected: errors.unexpected,
};

/** The generic codec (decodeObject, encodeJson) the generated one must agree with. */
export const generic = { ...genericJsonCodec(deps), ...genericValidator(deps) };
