/**
 * Reads back what `csv.ts` writes: COPY ... WITH (format csv) rows and the text[] literals in
 * them. Used only when the database refused a batch of rows and the writer needs its events
 * one by one again, so it favours being obviously right over being fast.
 */

/**
 * The rows of CSV text as fields: a quoted field is its text (`""` inside is one quote), an
 * unquoted field is its text too, except that an unquoted empty field is null. Rows end with
 * a line feed outside quotes; a last row without one is kept.
 */
export function readCsvRows(text: string): (string | null)[][] {
  const rows: (string | null)[][] = [];
  let row: (string | null)[] = [];
  let i = 0;
  while (i < text.length) {
    let field: string | null;
    if (text[i] === '"') {
      let value = "";
      i++;
      for (;;) {
        const close = text.indexOf('"', i);
        if (close < 0) throw new SyntaxError("unterminated quoted CSV field");
        value += text.slice(i, close);
        i = close + 1;
        if (text[i] !== '"') break;
        value += '"';
        i++;
      }
      field = value;
    } else {
      let end = i;
      while (end < text.length && text[end] !== "," && text[end] !== "\n") end++;
      field = end === i ? null : text.slice(i, end);
      i = end;
    }
    row.push(field);
    if (text[i] === ",") {
      i++;
      if (i === text.length) row.push(null);
      continue;
    }
    if (i < text.length && text[i] !== "\n") throw new SyntaxError("CSV field ends mid-text");
    rows.push(row);
    row = [];
    i++;
  }
  return rows;
}

/**
 * The elements of a one-dimensional text[] literal whose elements are all quoted, as
 * `csvTextArray` writes it: `{}` or `{"a","b\"c"}` (backslash escapes the next character).
 */
export function readTextArray(literal: string): string[] {
  if (literal === "{}") return [];
  if (literal[0] !== "{" || literal.at(-1) !== "}") throw new SyntaxError("not an array literal");
  const items: string[] = [];
  let i = 1;
  for (;;) {
    if (literal[i] !== '"') throw new SyntaxError("array element is not quoted");
    let value = "";
    i++;
    while (literal[i] !== '"') {
      if (i >= literal.length) throw new SyntaxError("unterminated array element");
      if (literal[i] === "\\") i++;
      value += literal[i];
      i++;
    }
    items.push(value);
    i++;
    if (literal[i] === "}" && i === literal.length - 1) return items;
    if (literal[i] !== ",") throw new SyntaxError("array elements not separated by a comma");
    i++;
  }
}
