import type { Setting } from "../config/parsers.js";
import { flagOf, SETTINGS, type SettingName } from "../config/settings.js";
import type { ConfigFlags } from "../config.js";
import type { OptionSpec, Parsed } from "./command.js";

// The flags of settings come from the settings table: one row there is a variable, a flag
// and a line of help, never written twice.

/** A setting's flag, with its variable and default in the help. */
export function settingOption(name: SettingName): [string, OptionSpec] {
  const s = SETTINGS[name];
  const secret = (s as Setting<unknown>).secret
    ? "; secret: prefer the variable (flags show in ps)"
    : "";
  return [
    flagOf(s),
    {
      type: "string",
      value: "VALUE",
      help: `${s.help} [${s.env}, default ${s.shownDefault}${secret}]`,
    },
  ];
}

/** The flags of settings among parsed options, by setting name. */
export function settingFlags(values: Parsed["values"], names: SettingName[]): ConfigFlags {
  const flags: ConfigFlags = {};
  for (const name of names) {
    const value = values[flagOf(SETTINGS[name])];
    if (typeof value === "string") flags[name] = value;
  }
  return flags;
}
