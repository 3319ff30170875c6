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
  "apis.updateApi": {
    request: {
      apiId: IDS.apiId,
      leakPolicy: "revoke",
      allowedCidrs: ["10.0.0.0/8", "2001:db8::/32"],
    },
    response: {
      data: { ...API, leakPolicy: "revoke", allowedCidrs: ["10.0.0.0/8", "2001:db8::/32"] },
    },
  },
  "apis.deleteApi": {
    request: { apiId: IDS.apiId },
    response: { data: {} },
  },
};
