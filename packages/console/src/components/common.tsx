import { Button, Callout, Code, Dialog, Flex, Table, Text, TextField } from "@radix-ui/themes";
import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from "react";
import { describeError } from "../api.ts";

/** A refusal or failure, announced to screen readers. */
export function ErrorNote({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <Callout.Root color="red" role="alert" my="3">
      <Callout.Text>{message}</Callout.Text>
    </Callout.Root>
  );
}

/** A stable text for a list of dependencies (int64 values are bigints). */
const keyOf = (deps: unknown[]) =>
  JSON.stringify(deps, (_, v) => (typeof v === "bigint" ? v.toString() : v));

/**
 * Loads with `fn` now and whenever `deps` change; `reload` runs it again. A failure becomes
 * a message saying what the root key may not do. An answer that comes after a newer load
 * began is dropped, so quick changes never show an older page.
 */
export function useLoad<T>(fn: () => Promise<T>, doing: string, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const latest = useRef(fn);
  latest.current = fn;
  const key = keyOf(deps);
  // biome-ignore lint/correctness/useExhaustiveDependencies: key and tick say when to load again
  useEffect(() => {
    let live = true;
    setLoading(true);
    latest.current().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (!live) return;
        setError(describeError(e, doing));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [key, tick, doing]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** A labelled text input. */
export function Field(props: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  type?: "text" | "number" | "password" | "datetime-local";
  placeholder?: string;
  hint?: string;
  required?: boolean;
  autoFocus?: boolean;
}) {
  const id = useId();
  return (
    <Flex direction="column" gap="1">
      <Text as="label" size="2" weight="medium" htmlFor={id}>
        {props.label}
      </Text>
      <TextField.Root
        id={id}
        type={props.type ?? "text"}
        value={props.value}
        placeholder={props.placeholder}
        required={props.required}
        autoFocus={props.autoFocus}
        autoComplete={props.type === "password" ? "off" : undefined}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onChange={(e) => props.onChange(e.target.value)}
      />
      {props.hint && (
        <Text id={`${id}-hint`} size="1" color="gray">
          {props.hint}
        </Text>
      )}
    </Flex>
  );
}

/** A dialog with a form: `onSubmit` runs the change; its failure is shown in the dialog. */
export function FormDialog(props: {
  trigger: ReactNode;
  title: string;
  submit: string;
  doing: string;
  onSubmit: () => Promise<void>;
  children: ReactNode;
  color?: "red";
}) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        setError(null);
      }}
    >
      <Dialog.Trigger>{props.trigger}</Dialog.Trigger>
      <Dialog.Content maxWidth="34rem" aria-describedby={undefined}>
        <Dialog.Title>{props.title}</Dialog.Title>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setBusy(true);
            props.onSubmit().then(
              () => {
                setBusy(false);
                setOpen(false);
              },
              (err: unknown) => {
                setBusy(false);
                setError(describeError(err, props.doing));
              },
            );
          }}
        >
          <Flex direction="column" gap="3">
            {props.children}
            <ErrorNote message={error} />
            <Flex gap="3" justify="end">
              <Dialog.Close>
                <Button type="button" variant="soft" color="gray">
                  Cancel
                </Button>
              </Dialog.Close>
              <Button type="submit" loading={busy} color={props.color}>
                {props.submit}
              </Button>
            </Flex>
          </Flex>
        </form>
      </Dialog.Content>
    </Dialog.Root>
  );
}

/** A secret shown once, with a copy button; it is gone when the dialog closes. */
export function SecretOnce({ secret, onClose }: { secret: string | null; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <Dialog.Root
      open={secret !== null}
      onOpenChange={(o) => {
        if (o) return;
        onClose();
        setCopied(false);
      }}
    >
      <Dialog.Content maxWidth="36rem">
        <Dialog.Title>Copy the key now</Dialog.Title>
        <Dialog.Description size="2" mb="3">
          This is the only time the key is shown: Latchkey keeps only its hash.
        </Dialog.Description>
        <Code size="3" data-testid="secret" style={{ wordBreak: "break-all", display: "block" }}>
          {secret}
        </Code>
        <Flex gap="3" justify="end" mt="4">
          <Button
            type="button"
            variant="soft"
            onClick={() => {
              void navigator.clipboard?.writeText(secret ?? "").then(() => setCopied(true));
            }}
          >
            {copied ? "Copied" : "Copy"}
          </Button>
          <Dialog.Close>
            <Button type="button">Done</Button>
          </Dialog.Close>
        </Flex>
      </Dialog.Content>
    </Dialog.Root>
  );
}

/** A Delete button that asks first, naming what goes and what follows from it. */
export function ConfirmDelete(props: {
  what: string;
  submit?: string;
  doing: string;
  consequence: string;
  onConfirm: () => Promise<unknown>;
}) {
  return (
    <FormDialog
      trigger={
        <Button size="1" variant="soft" color="red" aria-label={`Delete ${props.what}`}>
          Delete
        </Button>
      }
      title={`Delete ${props.what}?`}
      submit={props.submit ?? "Delete"}
      color="red"
      doing={props.doing}
      onSubmit={async () => {
        await props.onConfirm();
      }}
    >
      <Text>{props.consequence}</Text>
    </FormDialog>
  );
}

/**
 * A table's caption (its name to screen readers; Radix puts `aria-label` on a wrapper, not
 * on the table) and its header row, with an unlabelled actions column when `actions`.
 */
export function TableHead(props: { caption: string; columns: string[]; actions?: boolean }) {
  return (
    <>
      <caption className="sr-only">{props.caption}</caption>
      <Table.Header>
        <Table.Row>
          {props.columns.map((c) => (
            <Table.ColumnHeaderCell key={c}>{c}</Table.ColumnHeaderCell>
          ))}
          {props.actions && (
            <Table.ColumnHeaderCell>
              <span className="sr-only">Actions</span>
            </Table.ColumnHeaderCell>
          )}
        </Table.Row>
      </Table.Header>
    </>
  );
}
