import { Box, Button, Card, Flex, Spinner, Text } from "@radix-ui/themes";
import { useCallback, useEffect, useMemo, useState } from "react";
import { clientsFor, currentSession, type Session, signOut, whenSignedOut } from "./api.ts";
import { SignIn } from "./pages/SignIn.tsx";
import { type Route, Router, routeOf } from "./router.tsx";

const NAV: { path: string; label: string }[] = [
  { path: "/console/apis", label: "APIs" },
  { path: "/console/identities", label: "Identities" },
  { path: "/console/roles", label: "Roles and permissions" },
  { path: "/console/ratelimits", label: "Rate limits" },
  { path: "/console/audit", label: "Audit log" },
  { path: "/console/analytics", label: "Analytics" },
];

/** The console: the sign-in page until there is a session, then the pages. */
export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [route, setRoute] = useState<Route>(() => routeOf(window.location.pathname));
  const [menuOpen, setMenuOpen] = useState(false);

  useEffect(() => {
    void currentSession().then(setSession);
    whenSignedOut(() => setSession(null));
    const onPop = () => setRoute(routeOf(window.location.pathname));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  const go = useCallback((path: string) => {
    window.history.pushState(null, "", path);
    setRoute(routeOf(path));
    setMenuOpen(false);
    document.getElementById("main")?.focus();
  }, []);

  const clients = useMemo(() => (session ? clientsFor(session) : null), [session]);

  if (session === undefined)
    return (
      <Flex className="signin" role="status" aria-label="Loading">
        <Spinner size="3" />
      </Flex>
    );
  if (!session || !clients) return <SignIn onSignedIn={setSession} />;

  const current = NAV.find((n) => route.path.startsWith(n.path))?.path ?? "/console/apis";
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <aside className={`sidebar${menuOpen ? " open" : ""}`}>
        <Flex justify="between" align="center" mb="3">
          <Text size="4" weight="bold" as="p">
            Latchkey
          </Text>
          <Button
            className="menu-toggle"
            variant="soft"
            aria-expanded={menuOpen}
            aria-controls="console-nav"
            onClick={() => setMenuOpen((o) => !o)}
          >
            Menu
          </Button>
        </Flex>
        <nav id="console-nav" aria-label="Console">
          {NAV.map((n) => (
            <a
              key={n.path}
              href={n.path}
              aria-current={current === n.path ? "page" : undefined}
              onClick={(e) => {
                e.preventDefault();
                go(n.path);
              }}
            >
              {n.label}
            </a>
          ))}
          <Card mt="4" size="1">
            <Text as="p" size="1" color="gray">
              Signed in with root key
            </Text>
            <Text as="p" size="1" style={{ wordBreak: "break-all" }}>
              {session.rootKeyId}
            </Text>
            <Button
              mt="2"
              size="1"
              variant="outline"
              onClick={() => {
                void signOut(session).then(() => setSession(null));
              }}
            >
              Sign out
            </Button>
          </Card>
        </nav>
      </aside>
      <Box asChild className="main">
        <main id="main" tabIndex={-1}>
          <Router route={route} session={session} lk={clients} go={go} />
        </main>
      </Box>
    </div>
  );
}
