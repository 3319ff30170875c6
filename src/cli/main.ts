#!/usr/bin/env node
// The bin. It checks the Node version before it loads the commands and their dependencies:
// on an older Node the operator reads one line naming the version needed, not a stack
// trace from whichever module first reaches for something newer.
import { unsupportedNode } from "./node-version.js";

const problem = unsupportedNode(process.versions.node);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
await import("./commands.js");
