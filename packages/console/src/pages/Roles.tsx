import { Badge, Button, Flex, Grid, Heading, Table, Text } from "@radix-ui/themes";
import { useState } from "react";
import { ConfirmDelete, ErrorNote, Field, FormDialog, useLoad } from "../components/common.tsx";
import { listOf } from "../components/key-options.tsx";
import type { PageProps } from "../router.tsx";

/** Roles (with their permissions) and permissions: list, create, delete. */
export function RolesPage({ lk }: PageProps) {
  const roles = useLoad(() => lk.permissions.listRoles({ limit: 100 }), "list roles", []);
  const perms = useLoad(
    () => lk.permissions.listPermissions({ limit: 100 }),
    "list permissions",
    [],
  );
  const [role, setRole] = useState({ name: "", description: "", permissions: "" });
  const [perm, setPerm] = useState({ name: "", slug: "", description: "" });
  return (
    <>
      <Heading as="h1" mb="4">
        Roles and permissions
      </Heading>
      <Grid columns={{ initial: "1", md: "2" }} gap="5">
        <section aria-labelledby="roles-heading">
          <Flex justify="between" align="center" mb="2">
            <Heading as="h2" size="4" id="roles-heading">
              Roles
            </Heading>
            <FormDialog
              trigger={<Button size="2">Create role</Button>}
              title="Create a role"
              submit="Create"
              doing="create roles"
              onSubmit={async () => {
                await lk.permissions.createRole({
                  name: role.name,
                  description: role.description || undefined,
                  permissions: listOf(role.permissions),
                });
                setRole({ name: "", description: "", permissions: "" });
                roles.reload();
              }}
            >
              <Field
                label="Name"
                value={role.name}
                onChange={(name) => setRole({ ...role, name })}
                required
              />
              <Field
                label="Description"
                value={role.description}
                onChange={(description) => setRole({ ...role, description })}
              />
              <Field
                label="Permissions"
                value={role.permissions}
                onChange={(permissions) => setRole({ ...role, permissions })}
                hint="names, separated by commas"
              />
            </FormDialog>
          </Flex>
          <ErrorNote message={roles.error} />
          <Table.Root variant="surface">
            <caption className="sr-only">Roles</caption>
            <Table.Body>
              {(roles.data?.data ?? []).map((r) => (
                <Table.Row key={r.id}>
                  <Table.RowHeaderCell>
                    <Text weight="medium">{r.name}</Text>
                    <Flex gap="1" wrap="wrap" mt="1">
                      {r.permissions.map((p) => (
                        <Badge key={p.id}>{p.slug}</Badge>
                      ))}
                    </Flex>
                  </Table.RowHeaderCell>
                  <Table.Cell justify="end">
                    <ConfirmDelete
                      what={`role ${r.name}`}
                      doing="delete roles"
                      consequence="Keys holding it lose its permissions at once."
                      onConfirm={() => lk.permissions.deleteRole({ role: r.id }).then(roles.reload)}
                    />
                  </Table.Cell>
                </Table.Row>
              ))}
            </Table.Body>
          </Table.Root>
        </section>
        <section aria-labelledby="perms-heading">
          <Flex justify="between" align="center" mb="2">
            <Heading as="h2" size="4" id="perms-heading">
              Permissions
            </Heading>
            <FormDialog
              trigger={<Button size="2">Create permission</Button>}
              title="Create a permission"
              submit="Create"
              doing="create permissions"
              onSubmit={async () => {
                await lk.permissions.createPermission({
                  name: perm.name,
                  slug: perm.slug || perm.name,
                  description: perm.description || undefined,
                });
                setPerm({ name: "", slug: "", description: "" });
                perms.reload();
              }}
            >
              <Field
                label="Name"
                value={perm.name}
                onChange={(name) => setPerm({ ...perm, name })}
                required
              />
              <Field
                label="Slug"
                value={perm.slug}
                onChange={(slug) => setPerm({ ...perm, slug })}
                hint="default: the name"
              />
              <Field
                label="Description"
                value={perm.description}
                onChange={(description) => setPerm({ ...perm, description })}
              />
            </FormDialog>
          </Flex>
          <ErrorNote message={perms.error} />
          <Table.Root variant="surface">
            <caption className="sr-only">Permissions</caption>
            <Table.Body>
              {(perms.data?.data ?? []).map((p) => (
                <Table.Row key={p.id}>
                  <Table.RowHeaderCell>
                    <code>{p.slug}</code>
                    {p.description && (
                      <Text as="p" size="1" color="gray">
                        {p.description}
                      </Text>
                    )}
                  </Table.RowHeaderCell>
                  <Table.Cell justify="end">
                    <ConfirmDelete
                      what={`permission ${p.slug}`}
                      doing="delete permissions"
                      consequence="Keys and roles holding it lose it at once."
                      onConfirm={() =>
                        lk.permissions.deletePermission({ permission: p.id }).then(perms.reload)
                      }
                    />
                  </Table.Cell>
                </Table.Row>
              ))}
            </Table.Body>
          </Table.Root>
        </section>
      </Grid>
    </>
  );
}
