import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Every relative link of the README, ARCHITECTURE.md and docs/ names a file of the
// repository, and a link to a heading of a page names a heading that page has.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGES = [
  "README.md",
  "ARCHITECTURE.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replaceAll(" ", "-");
}

function anchors(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1] as string)));
}

/** The relative links of a page (outside code blocks): `[text](target)`. */
function links(page: string): string[] {
  const text = readFileSync(join(ROOT, page), "utf8").replace(/```[\s\S]*?```/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((t) => !/^[a-z]+:/.test(t));
}

describe("the documentation's links", () => {
  it.each(PAGES)("%s links only to files and headings that exist", (page) => {
    const broken: string[] = [];
    for (const link of links(page)) {
      const [path = "", anchor] = link.split("#");
      const target = path === "" ? page : relative(ROOT, join(ROOT, dirname(page), path));
      if (!existsSync(join(ROOT, target))) broken.push(`${link}: no file ${target}`);
      else if (anchor && target.endsWith(".md") && !anchors(target).has(anchor))
        broken.push(`${link}: no heading #${anchor} in ${target}`);
    }
    expect(broken).toEqual([]);
  });
});
