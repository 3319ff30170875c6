/**
 * Which APIs' analytics a root key may read: `null` for the whole workspace
 * (`api.*.read_analytics` or a wider grant), else the API ids of its `api.<apiId>.read_analytics`
 * grants (an `*` action or resource segment counts); an empty list means none at all.
 */
export function analyticsScope(granted: readonly string[]): string[] | null {
  const apiIds: string[] = [];
  for (const g of granted) {
    const [resource, id, action, extra] = g.split(".");
    if (extra !== undefined || id === undefined) continue;
    if (resource !== "api" && resource !== "*") continue;
    if (action !== "read_analytics" && action !== "*") continue;
    if (id === "*") return null;
    apiIds.push(id);
  }
  return apiIds;
}
