import type { Latchkey, Session } from "./api.ts";
import { AnalyticsPage } from "./pages/Analytics.tsx";
import { ApisPage } from "./pages/Apis.tsx";
import { AuditPage } from "./pages/Audit.tsx";
import { IdentitiesPage } from "./pages/Identities.tsx";
import { KeysPage } from "./pages/Keys.tsx";
import { RatelimitPage } from "./pages/Ratelimits.tsx";
import { RolesPage } from "./pages/Roles.tsx";

/** A console location: the path, and the API id of an API's keys page. */
export interface Route {
  path: string;
  apiId?: string;
}

/** Reads a location; an unknown one shows the APIs. */
export function routeOf(pathname: string): Route {
  const m = /^\/console\/apis\/([A-Za-z0-9_]+)\/?$/.exec(pathname);
  if (m) return { path: pathname, apiId: m[1] };
  return { path: pathname };
}

/** What every page gets: the session, its clients and navigation. */
export interface PageProps {
  session: Session;
  lk: Latchkey;
  go: (path: string) => void;
}

/** The page of a route. */
export function Router(props: PageProps & { route: Route }) {
  const { route, ...page } = props;
  if (route.apiId) return <KeysPage {...page} apiId={route.apiId} />;
  if (route.path.startsWith("/console/identities")) return <IdentitiesPage {...page} />;
  if (route.path.startsWith("/console/roles")) return <RolesPage {...page} />;
  if (route.path.startsWith("/console/ratelimits")) return <RatelimitPage {...page} />;
  if (route.path.startsWith("/console/audit")) return <AuditPage {...page} />;
  if (route.path.startsWith("/console/analytics")) return <AnalyticsPage {...page} />;
  return <ApisPage {...page} />;
}
