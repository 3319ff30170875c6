import { type Examples, IDS } from "./example.ts";
import { KEY } from "./key.ts";

const API = {
  id: IDS.apiId,
  name: "weather-api-production",
  keyFormat: "checksummed",
  leakPolicy: "disable",
};

/** Examples of the apis namespace. */
export const API_EXAMPLES: Examples = {
  "apis.createApi": {
    request: { name: API.name, keyFormat: API.keyFormat, leakPolicy: API.leakPolicy },
    response: { data: { apiId: IDS.apiId } },
  },
  "apis.getApi": {
    request: { apiId: IDS.apiId },
    response: { data: API },
  },
  "apis.listApis": {
    request: { limit: 10 },
    response: { data: [API], pagination: { hasMore: false } },
  },
  "apis.listKeys": {
    request: { apiId: IDS.apiId, limit: 10 },
    response: { data: [KEY], pagination: { hasMore: false } },
  },
  "apis.deleteApi": {
    request: { apiId: IDS.apiId },
    response: { data: {} },
  },
};
