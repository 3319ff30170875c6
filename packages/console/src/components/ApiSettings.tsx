import { Button, Flex, Select, Text } from "@radix-ui/themes";
import { useId, useState } from "react";
import { type Api, KeyFormat, LeakPolicy } from "../../../../gen/latchkey/v2/apis_pb.js";
import type { Latchkey } from "../api.ts";
import { Field, FormDialog } from "./common.tsx";
import { listOf } from "./key-options.tsx";

/** A labelled choice among the values of an enum, for the settings form. */
function Choice(props: {
  label: string;
  value: number;
  onChange: (v: number) => void;
  options: [number, string][];
}) {
  const id = useId();
  return (
    <Flex direction="column" gap="1">
      <Text as="label" size="2" weight="medium" id={id}>
        {props.label}
      </Text>
      <Select.Root value={String(props.value)} onValueChange={(v) => props.onChange(Number(v))}>
        <Select.Trigger aria-labelledby={id} />
        <Select.Content>
          {props.options.map(([v, text]) => (
            <Select.Item key={v} value={String(v)}>
              {text}
            </Select.Item>
          ))}
        </Select.Content>
      </Select.Root>
    </Flex>
  );
}

/**
 * The settings of an API (name, key format, leak policy, network ranges) in a dialog that
 * saves them all with apis.updateApi: its mask names every field, so an emptied list of ranges
 * removes them.
 */
export function ApiSettings({
  api,
  lk,
  onChanged,
}: {
  api: Api;
  lk: Latchkey;
  onChanged: () => void;
}) {
  const [name, setName] = useState(api.name);
  const [keyFormat, setKeyFormat] = useState<number>(api.keyFormat);
  const [leakPolicy, setLeakPolicy] = useState<number>(api.leakPolicy);
  const [cidrs, setCidrs] = useState(api.allowedCidrs.join(", "));
  return (
    <FormDialog
      trigger={<Button variant="soft">API settings</Button>}
      title={`Settings of ${api.name}`}
      submit="Save settings"
      doing="change this API"
      onSubmit={async () => {
        await lk.apis.updateApi({
          apiId: api.id,
          name,
          keyFormat,
          leakPolicy,
          allowedCidrs: listOf(cidrs),
          updateMask: { paths: ["name", "key_format", "leak_policy", "allowed_cidrs"] },
        });
        onChanged();
      }}
    >
      <Field label="Name" value={name} onChange={setName} required hint="3 to 256 characters" />
      <Choice
        label="Key format"
        value={keyFormat}
        onChange={setKeyFormat}
        options={[
          [KeyFormat.CHECKSUMMED, "Checksummed (scanners can recognise a leaked key)"],
          [KeyFormat.PLAIN, "Plain"],
        ]}
      />
      <Text size="1" color="gray">
        The format applies to keys created or rerolled from now on; existing keys keep working.
      </Text>
      <Choice
        label="When a key leaks"
        value={leakPolicy}
        onChange={setLeakPolicy}
        options={[
          [LeakPolicy.DISABLE, "Disable the key"],
          [LeakPolicy.REVOKE, "Delete the key"],
          [LeakPolicy.NOTIFY, "Only record it"],
        ]}
      />
      <Field
        label="Allowed networks"
        value={cidrs}
        onChange={setCidrs}
        placeholder="10.0.0.0/8, 2001:db8::/32"
        hint="for keys without networks of their own; empty: anywhere"
      />
    </FormDialog>
  );
}
