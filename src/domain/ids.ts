import { randomString } from "./random.js";

/** The prefixes of every id Latchkey hands out. Ids are opaque to clients. */
export type IdPrefix =
  | "key"
  | "api"
  | "id"
  | "perm"
  | "role"
  | "rl"
  | "rlns"
  | "rlor"
  | "ws"
  | "req"
  | "rk"
  | "node"
  | "res"
  | "whep"
  | "msg";

/** Random part length: 16 characters of 62 give about 95 bits, so collisions are not a concern. */
const ID_RANDOM_LENGTH = 16;

/** Returns a new random id such as `api_3kTmZ0aQ9bXv1LrW`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomString(ID_RANDOM_LENGTH)}`;
}
