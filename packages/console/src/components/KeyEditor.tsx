import { Badge, Button, DataList, Dialog, Flex, Separator, Switch, Text } from "@radix-ui/themes";
import { type ReactNode, useId, useState } from "react";
import { CreditsOperation, type Key } from "../../../../gen/latchkey/v2/keys_pb.js";
import { describeError, type Latchkey, when } from "../api.ts";
import { ErrorNote, Field } from "./common.tsx";
import { listOf, msOf, ratelimitsOf } from "./key-options.tsx";

const toLocal = (ms: bigint | undefined) =>
  ms
    ? new Date(Number(ms) - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
    : "";

/** One setting of a key: its fields and the button that applies them. */
function Setting(props: {
  action: string;
  color?: "amber";
  onClick: () => void;
  children: ReactNode;
}) {
  return (
    <Flex gap="2" align="end" wrap="wrap">
      {props.children}
      <Button variant="soft" color={props.color} onClick={props.onClick}>
        {props.action}
      </Button>
    </Flex>
  );
}

/**
 * Everything that can be changed on one key, each change on its own: enabled, credits,
 * expiry, roles, permissions, its rate limit, a reroll with a grace period, deletion.
 */
export function KeyEditor(props: {
  keyRow: Key;
  lk: Latchkey;
  onChanged: () => void;
  onSecret: (s: string) => void;
}) {
  const k = props.keyRow;
  const { lk } = props;
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [credits, setCredits] = useState(k.credits?.remaining?.toString() ?? "");
  const [expires, setExpires] = useState(toLocal(k.expires));
  const [roles, setRoles] = useState(k.roles.join(", "));
  const [permissions, setPermissions] = useState(k.permissions.join(", "));
  const first = k.ratelimits[0];
  const [limitName, setLimitName] = useState(first?.name ?? "");
  const [limit, setLimit] = useState(first?.limit.toString() ?? "");
  const [windowS, setWindowS] = useState(first ? String(Number(first.duration) / 1000) : "");
  const [graceS, setGraceS] = useState("3600");
  const enabledId = useId();

  const run =
    (doing: string, change: () => Promise<unknown>, close = false) =>
    () => {
      setError(null);
      change().then(
        () => {
          props.onChanged();
          if (close) setOpen(false);
        },
        (e: unknown) => setError(describeError(e, doing)),
      );
    };
  const keyId = k.keyId;
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger>
        <Button size="1" variant="soft" aria-label={`Manage key ${k.name ?? k.start}`}>
          Manage
        </Button>
      </Dialog.Trigger>
      <Dialog.Content maxWidth="40rem" aria-describedby={undefined}>
        <Dialog.Title>Key {k.name ?? k.start}</Dialog.Title>
        <DataList.Root size="1" mb="3">
          <DataList.Item>
            <DataList.Label>Key id</DataList.Label>
            <DataList.Value>
              <code>{keyId}</code>
            </DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Starts with</DataList.Label>
            <DataList.Value>
              <code>{k.start}</code>
            </DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Identity</DataList.Label>
            <DataList.Value>{k.identity?.externalId ?? "—"}</DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Created</DataList.Label>
            <DataList.Value>{when(k.createdAt)}</DataList.Value>
          </DataList.Item>
        </DataList.Root>
        <ErrorNote message={error} />
        <Flex direction="column" gap="3">
          <Text as="label" size="2" htmlFor={enabledId}>
            <Flex gap="2" align="center">
              <Switch
                id={enabledId}
                checked={k.enabled}
                onCheckedChange={(enabled) =>
                  run(enabled ? "enable keys" : "disable keys", () =>
                    lk.keys.updateKey({ keyId, enabled, updateMask: { paths: ["enabled"] } }),
                  )()
                }
              />
              {k.enabled ? "Enabled" : "Disabled"}
            </Flex>
          </Text>
          <Separator size="4" />
          <Setting
            action={"Set credits"}
            onClick={run("change credits", () =>
              lk.keys.updateCredits({
                keyId,
                operation: CreditsOperation.SET,
                value: credits === "" ? undefined : BigInt(credits),
              }),
            )}
          >
            <Field
              label="Credits"
              type="number"
              value={credits}
              onChange={setCredits}
              hint="empty: unlimited"
            />
          </Setting>
          <Setting
            action={expires ? "Set expiry" : "Remove expiry"}
            onClick={run("change the expiry", () =>
              lk.keys.updateKey({
                keyId,
                expires: expires ? BigInt(new Date(expires).getTime()) : undefined,
                updateMask: { paths: ["expires"] },
              }),
            )}
          >
            <Field label="Expires" type="datetime-local" value={expires} onChange={setExpires} />
          </Setting>
          <Setting
            action={"Set roles"}
            onClick={run("set roles", () => lk.keys.setRoles({ keyId, roles: listOf(roles) }))}
          >
            <Field label="Roles" value={roles} onChange={setRoles} />
          </Setting>
          <Setting
            action={"Set permissions"}
            onClick={run("set permissions", () =>
              lk.keys.setPermissions({ keyId, permissions: listOf(permissions) }),
            )}
          >
            <Field label="Permissions" value={permissions} onChange={setPermissions} />
          </Setting>
          <Setting
            action={"Set limit"}
            onClick={run("change rate limits", () =>
              lk.keys.updateKey({
                keyId,
                ratelimits: ratelimitsOf(limitName, limit, windowS),
                updateMask: { paths: ["ratelimits"] },
              }),
            )}
          >
            <Field label="Rate limit name" value={limitName} onChange={setLimitName} />
            <Field label="Limit" type="number" value={limit} onChange={setLimit} />
            <Field label="Window (s)" type="number" value={windowS} onChange={setWindowS} />
          </Setting>
          <Separator size="4" />
          <Setting
            action={"Reroll"}
            color="amber"
            onClick={run(
              "reroll keys",
              async () => {
                const { data } = await lk.keys.rerollKey({
                  keyId,
                  expiration: msOf(graceS),
                });
                if (data) props.onSecret(data.key);
              },
              true,
            )}
          >
            <Field
              label="Grace period (s)"
              type="number"
              value={graceS}
              onChange={setGraceS}
              hint="the old key keeps working this long"
            />
          </Setting>
          <Flex justify="between" align="center" mt="2">
            <Button
              color="red"
              variant="soft"
              onClick={run("delete keys", () => lk.keys.deleteKey({ keyId }), true)}
            >
              Delete key
            </Button>
            <Dialog.Close>
              <Button variant="soft" color="gray">
                Close
              </Button>
            </Dialog.Close>
          </Flex>
        </Flex>
        {k.ratelimits.length > 1 && (
          <Badge mt="2">This key has {k.ratelimits.length} limits; the form edits the first.</Badge>
        )}
      </Dialog.Content>
    </Dialog.Root>
  );
}
