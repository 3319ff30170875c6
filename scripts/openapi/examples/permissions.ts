import { type Examples, IDS } from "./example.ts";

/** The example permission, as reads show it. */
export const FORECAST_READ = {
  id: IDS.permissionId,
  name: "forecast.read",
  slug: "forecast.read",
  description: "Read current and upcoming weather forecasts.",
};

/** A permission keys.addPermissions created on the way (a missing slug is created). */
export const FORECAST_HISTORY = {
  id: "perm_7Lk3Jh9Gf5Ds1Az2",
  name: "forecast.history",
  slug: "forecast.history",
  description: "Auto-created permission: forecast.history",
};

/** The example role with both permissions, as reads show it after setRolePermissions. */
export const READER_ROLE = {
  id: IDS.roleId,
  name: "forecast-reader",
  description: "Customers who may read forecasts.",
  permissions: [FORECAST_HISTORY, FORECAST_READ],
};

/** Examples of the permissions namespace (permissions and roles). */
export const PERMISSION_EXAMPLES: Examples = {
  "permissions.createPermission": {
    request: {
      name: FORECAST_READ.name,
      slug: FORECAST_READ.slug,
      description: FORECAST_READ.description,
    },
    response: { data: { permissionId: IDS.permissionId } },
  },
  "permissions.getPermission": {
    request: { permission: "forecast.read" },
    response: { data: FORECAST_READ },
  },
  "permissions.listPermissions": {
    request: { limit: 10 },
    response: { data: [FORECAST_READ], pagination: { hasMore: false } },
  },
  "permissions.createRole": {
    request: {
      name: "forecast-reader",
      description: "Customers who may read forecasts.",
      permissions: ["forecast.read"],
    },
    response: { data: { roleId: IDS.roleId } },
  },
  "permissions.getRole": {
    request: { role: "forecast-reader" },
    response: { data: { ...READER_ROLE, permissions: [FORECAST_READ] } },
  },
  "permissions.listRoles": {
    request: { limit: 10 },
    response: {
      data: [{ ...READER_ROLE, permissions: [FORECAST_READ] }],
      pagination: { hasMore: false },
    },
  },
  "permissions.setRolePermissions": {
    request: { roleId: IDS.roleId, permissions: ["forecast.read", "forecast.history"] },
    response: { data: [FORECAST_HISTORY, FORECAST_READ] },
  },
  "permissions.deleteRole": {
    request: { role: "forecast-reader" },
    response: { data: {} },
  },
  "permissions.deletePermission": {
    request: { permission: "forecast.read" },
    response: { data: {} },
  },
};
