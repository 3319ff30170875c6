// Runs the command the arguments name, on import: main.ts (the bin) loads this module once it
// has checked the Node version, so nothing here is loaded on a Node too old to run it.
import { pino } from "pino";
import { runCli } from "./cli.js";

// Synchronous writes (pino's sonic-boom): a failure's line is out before the exit, and a
// reader that went away (a broken pipe) stops the output instead of the exit.
const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: pino.destination({ dest: 1, sync: true }),
  stderr: pino.destination({ dest: 2, sync: true }),
});
// A failed start may have left a client reconnecting: the exit does not wait for it. A
// command that succeeded ends when its work does (serve: when it is stopped).
if (code !== 0) process.exit(code);
