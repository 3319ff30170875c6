import { Flex, Select, Switch, Text } from "@radix-ui/themes";
import { useId } from "react";
import { RefillInterval } from "../../../../gen/latchkey/v2/common_pb.js";
import { Field } from "./common.tsx";

/** The options a key is created or edited with, as the form holds them (text fields). */
export interface KeyOptions {
  name: string;
  prefix: string;
  byteLength: string;
  externalId: string;
  roles: string;
  permissions: string;
  expires: string;
  credits: string;
  refill: "none" | "daily" | "monthly";
  refillAmount: string;
  refillDay: string;
  limitName: string;
  limit: string;
  limitDurationS: string;
  enabled: boolean;
  meta: string;
}

export const NO_OPTIONS: KeyOptions = {
  name: "",
  prefix: "",
  byteLength: "",
  externalId: "",
  roles: "",
  permissions: "",
  expires: "",
  credits: "",
  refill: "none",
  refillAmount: "",
  refillDay: "",
  limitName: "",
  limit: "",
  limitDurationS: "",
  enabled: true,
  meta: "",
};

/** A comma- or space-separated list. */
export const listOf = (s: string) => s.split(/[\s,]+/).filter((x) => x !== "");

/** Seconds as typed into a form, as int64 milliseconds. */
export const msOf = (seconds: string) => BigInt(Math.round(Number(seconds || "0") * 1000));

/** The one rate limit a form names (auto-applied), or none when it has no name. */
export function ratelimitsOf(name: string, limit: string, windowS: string) {
  return name === ""
    ? []
    : [{ name, limit: BigInt(limit || "0"), duration: msOf(windowS), autoApply: true }];
}

/** The request fields the options give (those left empty are left out). */
export function keyFields(o: KeyOptions) {
  const credits =
    o.credits === ""
      ? undefined
      : {
          remaining: BigInt(o.credits),
          refill:
            o.refill === "none"
              ? undefined
              : {
                  interval: o.refill === "daily" ? RefillInterval.DAILY : RefillInterval.MONTHLY,
                  amount: BigInt(o.refillAmount || "0"),
                  refillDay:
                    o.refill === "monthly" && o.refillDay ? Number(o.refillDay) : undefined,
                },
        };
  const ratelimits = ratelimitsOf(o.limitName, o.limit, o.limitDurationS);
  return {
    name: o.name || undefined,
    externalId: o.externalId || undefined,
    roles: listOf(o.roles),
    permissions: listOf(o.permissions),
    expires: o.expires ? BigInt(new Date(o.expires).getTime()) : undefined,
    credits,
    ratelimits,
    enabled: o.enabled,
    meta: o.meta ? (JSON.parse(o.meta) as Record<string, never>) : undefined,
  };
}

/** The form of a key's options; `creating` adds those only creation takes. */
export function KeyOptionsForm(props: {
  value: KeyOptions;
  onChange: (o: KeyOptions) => void;
  creating: boolean;
}) {
  const o = props.value;
  const set = (patch: Partial<KeyOptions>) => props.onChange({ ...o, ...patch });
  const refillId = useId();
  const enabledId = useId();
  return (
    <Flex direction="column" gap="3">
      <Field label="Name" value={o.name} onChange={(name) => set({ name })} />
      {props.creating && (
        <Flex gap="3" wrap="wrap">
          <Field
            label="Prefix"
            value={o.prefix}
            onChange={(prefix) => set({ prefix })}
            hint="letters, digits, _"
          />
          <Field
            label="Random bytes"
            type="number"
            value={o.byteLength}
            onChange={(byteLength) => set({ byteLength })}
            hint="16 to 255; default 16"
          />
        </Flex>
      )}
      <Field
        label="External id (identity)"
        value={o.externalId}
        onChange={(externalId) => set({ externalId })}
        hint="links the key to this identity, created if new"
      />
      <Field
        label="Roles"
        value={o.roles}
        onChange={(roles) => set({ roles })}
        hint="names, separated by commas"
      />
      <Field
        label="Permissions"
        value={o.permissions}
        onChange={(permissions) => set({ permissions })}
        hint="names, separated by commas"
      />
      <Field
        label="Expires"
        type="datetime-local"
        value={o.expires}
        onChange={(expires) => set({ expires })}
      />
      <Flex gap="3" wrap="wrap" align="end">
        <Field
          label="Credits"
          type="number"
          value={o.credits}
          onChange={(credits) => set({ credits })}
          hint="empty: unlimited"
        />
        <Flex direction="column" gap="1">
          <Text as="label" size="2" weight="medium" id={refillId}>
            Refill
          </Text>
          <Select.Root
            value={o.refill}
            onValueChange={(v) => set({ refill: v as KeyOptions["refill"] })}
          >
            <Select.Trigger aria-labelledby={refillId} />
            <Select.Content>
              <Select.Item value="none">None</Select.Item>
              <Select.Item value="daily">Daily</Select.Item>
              <Select.Item value="monthly">Monthly</Select.Item>
            </Select.Content>
          </Select.Root>
        </Flex>
        {o.refill !== "none" && (
          <Field
            label="Refill amount"
            type="number"
            value={o.refillAmount}
            onChange={(refillAmount) => set({ refillAmount })}
          />
        )}
        {o.refill === "monthly" && (
          <Field
            label="Refill day"
            type="number"
            value={o.refillDay}
            onChange={(refillDay) => set({ refillDay })}
          />
        )}
      </Flex>
      <Flex gap="3" wrap="wrap">
        <Field
          label="Rate limit name"
          value={o.limitName}
          onChange={(limitName) => set({ limitName })}
        />
        <Field label="Limit" type="number" value={o.limit} onChange={(limit) => set({ limit })} />
        <Field
          label="Window (seconds)"
          type="number"
          value={o.limitDurationS}
          onChange={(limitDurationS) => set({ limitDurationS })}
        />
      </Flex>
      <Field
        label="Meta (JSON object)"
        value={o.meta}
        onChange={(meta) => set({ meta })}
        placeholder='{"plan": "pro"}'
      />
      <Text as="label" size="2" htmlFor={enabledId}>
        <Flex gap="2" align="center">
          <Switch
            id={enabledId}
            checked={o.enabled}
            onCheckedChange={(enabled) => set({ enabled })}
          />
          Enabled
        </Flex>
      </Text>
    </Flex>
  );
}
