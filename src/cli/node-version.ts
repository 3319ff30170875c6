/**
 * The oldest Node.js major version the server runs on, the `engines.node` of package.json
 * (`>=22`): what its dependencies declare (`@connectrpc/connect-node` needs 22).
 */
export const MINIMUM_NODE_MAJOR = 22;

/**
 * The line to print when `version` (as in `process.versions.node`, `20.20.2`) is older than
 * {@link MINIMUM_NODE_MAJOR}; undefined when it is recent enough.
 */
export function unsupportedNode(version: string): string | undefined {
  const major = Number.parseInt(version, 10);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  return `latchkey needs Node.js ${MINIMUM_NODE_MAJOR} or newer; this is Node.js v${version}`;
}
