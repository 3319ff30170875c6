import type { ServiceImpl } from "@connectrpc/connect";
import type { ApisService } from "../../../gen/latchkey/v2/apis_pb.js";
import type { Deps } from "../deps.js";
import { createApi } from "./create-api.js";
import { deleteApi } from "./delete-api.js";
import { getApi } from "./get-api.js";
import { listApis } from "./list-apis.js";
import { listKeys } from "./list-keys.js";
import { updateApi } from "./update-api.js";

/** The ApisService implementation. */
export function apisService(deps: Deps): ServiceImpl<typeof ApisService> {
  return {
    createApi: (req, ctx) => createApi(deps, req, ctx),
    getApi: (req, ctx) => getApi(deps, req, ctx),
    updateApi: (req, ctx) => updateApi(deps, req, ctx),
    deleteApi: (req, ctx) => deleteApi(deps, req, ctx),
    listApis: (req, ctx) => listApis(deps, req, ctx),
    listKeys: (req, ctx) => listKeys(deps, req, ctx),
  };
}
