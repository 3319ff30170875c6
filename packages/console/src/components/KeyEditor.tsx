import { Badge, Button, DataList, Dialog, Flex, Separator, Switch, Text } from "@radix-ui/themes";
import { type ReactNode, useId, useState } from "react";
import { CreditsOperation, type Key } from "../../../../gen/latchkey/v2/keys_pb.js";
import { describeError, type Latchkey, when } from "../api.ts";
import { ErrorNote, Field } from "./common.tsx";
import { listOf, msOf, ratelimitsOf } from "./key-options.tsx";

/** Unix ms as the value of a datetime-local input (local time, to the minute). */
const toLocal = (ms: bigint | undefined) =>
  ms
    ? new Date(Number(ms) - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
    : "";

/** Runs a change: `doing` names it in a refusal; `close` closes the dialog once it is made. */
type Run = (doing: string, change: () => Promise<unknown>, close?: boolean) => () => void;

/** What every part of the editor gets: the key, the clients and the way to run a change. */
interface Part {
  k: Key;
  lk: Latchkey;
  run: Run;
}

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

/** The facts of a key that cannot be changed here. */
function KeyFacts({ k }: { k: Key }) {
  const facts: [string, ReactNode][] = [
    ["Key id", <code key="id">{k.keyId}</code>],
    ["Starts with", <code key="start">{k.start}</code>],
    ["Identity", k.identity?.externalId ?? "—"],
    ["Created", when(k.createdAt)],
  ];
  return (
    <DataList.Root size="1" mb="3">
      {facts.map(([label, value]) => (
        <DataList.Item key={label}>
          <DataList.Label>{label}</DataList.Label>
          <DataList.Value>{value}</DataList.Value>
        </DataList.Item>
      ))}
    </DataList.Root>
  );
}

/** Enabled or not, applied at once. */
function EnabledSwitch({ k, lk, run }: Part) {
  const id = useId();
  const set = (enabled: boolean) =>
    run(enabled ? "enable keys" : "disable keys", () =>
      lk.keys.updateKey({ keyId: k.keyId, enabled, updateMask: { paths: ["enabled"] } }),
    )();
  return (
    <Text as="label" size="2" htmlFor={id}>
      <Flex gap="2" align="center">
        <Switch id={id} checked={k.enabled} onCheckedChange={set} />
        {k.enabled ? "Enabled" : "Disabled"}
      </Flex>
    </Text>
  );
}

/** Credits, expiry, roles and permissions, each set on its own. */
function Grants({ k, lk, run }: Part) {
  const keyId = k.keyId;
  const [credits, setCredits] = useState(k.credits?.remaining?.toString() ?? "");
  const [expires, setExpires] = useState(toLocal(k.expires));
  const [roles, setRoles] = useState(k.roles.join(", "));
  const [permissions, setPermissions] = useState(k.permissions.join(", "));
  const value = credits === "" ? undefined : BigInt(credits);
  const expiresMs = expires ? BigInt(new Date(expires).getTime()) : undefined;
  return (
    <>
      <Setting
        action="Set credits"
        onClick={run("change credits", () =>
          lk.keys.updateCredits({ keyId, operation: CreditsOperation.SET, value }),
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
          lk.keys.updateKey({ keyId, expires: expiresMs, updateMask: { paths: ["expires"] } }),
        )}
      >
        <Field label="Expires" type="datetime-local" value={expires} onChange={setExpires} />
      </Setting>
      <Setting
        action="Set roles"
        onClick={run("set roles", () => lk.keys.setRoles({ keyId, roles: listOf(roles) }))}
      >
        <Field label="Roles" value={roles} onChange={setRoles} />
      </Setting>
      <Setting
        action="Set permissions"
        onClick={run("set permissions", () =>
          lk.keys.setPermissions({ keyId, permissions: listOf(permissions) }),
        )}
      >
        <Field label="Permissions" value={permissions} onChange={setPermissions} />
      </Setting>
    </>
  );
}

/** The key's rate limit (the first, when it has several). */
function Limit({ k, lk, run }: Part) {
  const first = k.ratelimits[0];
  const [name, setName] = useState(first?.name ?? "");
  const [limit, setLimit] = useState(first?.limit.toString() ?? "");
  const [windowS, setWindowS] = useState(first ? String(Number(first.duration) / 1000) : "");
  return (
    <>
      <Setting
        action="Set limit"
        onClick={run("change rate limits", () =>
          lk.keys.updateKey({
            keyId: k.keyId,
            ratelimits: ratelimitsOf(name, limit, windowS),
            updateMask: { paths: ["ratelimits"] },
          }),
        )}
      >
        <Field label="Rate limit name" value={name} onChange={setName} />
        <Field label="Limit" type="number" value={limit} onChange={setLimit} />
        <Field label="Window (s)" type="number" value={windowS} onChange={setWindowS} />
      </Setting>
      {k.ratelimits.length > 1 && (
        <Badge>This key has {k.ratelimits.length} limits; the form edits the first.</Badge>
      )}
    </>
  );
}

/** A reroll with a grace period (the new secret is shown once). */
function Reroll({ k, lk, run, onSecret }: Part & { onSecret: (s: string) => void }) {
  const [graceS, setGraceS] = useState("3600");
  const reroll = async () => {
    const { data } = await lk.keys.rerollKey({ keyId: k.keyId, expiration: msOf(graceS) });
    if (data) onSecret(data.key);
  };
  return (
    <Setting action="Reroll" color="amber" onClick={run("reroll keys", reroll, true)}>
      <Field
        label="Grace period (s)"
        type="number"
        value={graceS}
        onChange={setGraceS}
        hint="the old key keeps working this long"
      />
    </Setting>
  );
}

/**
 * Everything that can be changed on one key, each change on its own: enabled, credits,
 * expiry, roles, permissions, its rate limit, a reroll with a grace period, deletion. A
 * refusal is shown in the dialog, naming what the root key may not do.
 */
export function KeyEditor(props: {
  keyRow: Key;
  lk: Latchkey;
  onChanged: () => void;
  onSecret: (s: string) => void;
}) {
  const k = props.keyRow;
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run: Run =
    (doing, change, close = false) =>
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
  const part = { k, lk: props.lk, run };
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger>
        <Button size="1" variant="soft" aria-label={`Manage key ${k.name ?? k.start}`}>
          Manage
        </Button>
      </Dialog.Trigger>
      <Dialog.Content maxWidth="40rem" aria-describedby={undefined}>
        <Dialog.Title>Key {k.name ?? k.start}</Dialog.Title>
        <KeyFacts k={k} />
        <ErrorNote message={error} />
        <Flex direction="column" gap="3">
          <EnabledSwitch {...part} />
          <Separator size="4" />
          <Grants {...part} />
          <Limit {...part} />
          <Separator size="4" />
          <Reroll {...part} onSecret={props.onSecret} />
          <Flex justify="between" align="center" mt="2">
            <Button
              color="red"
              variant="soft"
              onClick={run("delete keys", () => props.lk.keys.deleteKey({ keyId: k.keyId }), true)}
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
      </Dialog.Content>
    </Dialog.Root>
  );
}
