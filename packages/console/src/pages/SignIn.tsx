import { Button, Card, Flex, Heading, Text } from "@radix-ui/themes";
import { useState } from "react";
import { type Session, signIn } from "../api.ts";
import { ErrorNote, Field } from "../components/common.tsx";

/**
 * Sign-in with a root key. The key goes to the server once and is exchanged for a session
 * cookie the page's scripts cannot read; it is dropped from memory as soon as that is done.
 */
export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [rootKey, setRootKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main className="signin">
      <Card size="4" style={{ width: "100%", maxWidth: "26rem" }}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setBusy(true);
            signIn(rootKey).then(
              (s) => {
                setRootKey("");
                onSignedIn(s);
              },
              (err: unknown) => {
                setBusy(false);
                setError(err instanceof Error ? err.message : String(err));
              },
            );
          }}
        >
          <Flex direction="column" gap="4">
            <Heading as="h1" size="6">
              Latchkey console
            </Heading>
            <Text size="2" color="gray">
              Sign in with a root key. The console can do what that key may do, and nothing more;
              the key is not stored in this browser.
            </Text>
            <Field
              label="Root key"
              type="password"
              value={rootKey}
              onChange={setRootKey}
              required
              autoFocus
            />
            <ErrorNote message={error} />
            <Button type="submit" size="3" loading={busy}>
              Sign in
            </Button>
          </Flex>
        </form>
      </Card>
    </main>
  );
}
