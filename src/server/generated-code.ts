import type { DescMessage } from "@bufbuild/protobuf";

/**
 * The pieces the /v2 codec and the validator use to turn a message's descriptor into a
 * function of its own, once per message type, with `new Function`.
 *
 * Why generated code: a generic walk reads every message's fields by a name held in a
 * variable (`message[field.localName]`), and reads its plans' and descriptors' properties the
 * same way for every message type; V8 then treats those loads as megamorphic, on every field
 * of every request and answer. A function written for one message reads `message["keyId"]`
 * at a site of its own, which stays monomorphic, and has no plan left to consult.
 *
 * What goes into the source: only the contract's own descriptors and options (field names,
 * JSON names, kinds, bounds, enum strings), each written as a JSON literal by `js`, and the
 * names of the values handed in as parameters. Nothing of a request or answer ever does:
 * they are the arguments of the function made, never part of its text.
 */

/** A value of the contract as a JavaScript literal in generated source. */
export function js(value: string | number | boolean | undefined): string {
  if (value === undefined) return "undefined";
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new TypeError(`not a literal: ${value}`);
  }
  return JSON.stringify(value);
}

/** A JavaScript identifier naming a message type's function in stack traces and profiles. */
export function functionName(prefix: string, desc: DescMessage): string {
  return `${prefix}_${desc.typeName.replace(/[^A-Za-z0-9_]/g, "_")}`;
}

/**
 * Builds the function `body` returns, with `scope` (names to values) in its closure. The
 * body is source written by a generator of this directory from descriptors (see above).
 */
export function compileFunction<F>(scope: Record<string, unknown>, body: string): F {
  const names = Object.keys(scope);
  // The source is built from the contract's descriptors only (see above), never from a request.
  const make = new Function(...names, body) as (...values: unknown[]) => F;
  return make(...names.map((n) => scope[n]));
}

/** A message type's generated function, made on its first call. */
export interface Cell<F> {
  fn: F;
  generated: boolean;
}

/**
 * The generated functions of one kind (encoders, decoders, validators), one per message type,
 * by type name. A nested message's function is generated on its first call, not when its
 * cell is taken: a message referring to itself (or to one that refers back) gets the cell
 * before the function exists, and a contract fault found while generating (a rule naming no
 * field) is thrown when a request first reaches that message, every time, as the generic walk
 * did, rather than while the server starts.
 */
export class PerMessage<F extends (...args: never[]) => unknown> {
  readonly #cells = new Map<string, Cell<F>>();
  readonly #generate: (desc: DescMessage) => F;

  constructor(generate: (desc: DescMessage) => F) {
    this.#generate = generate;
  }

  /** The cell of `desc`; its `fn` generates the function when first called. */
  cell(desc: DescMessage): Cell<F> {
    let cell = this.#cells.get(desc.typeName);
    if (cell) return cell;
    const made: Cell<F> = {
      fn: ((...args: Parameters<F>) => this.#ready(made, desc)(...args)) as F,
      generated: false,
    };
    cell = made;
    this.#cells.set(desc.typeName, cell);
    return cell;
  }

  /** The function of `desc`, generated now if it was not yet. */
  ready(desc: DescMessage): F {
    const cell = this.cell(desc);
    return cell.generated ? cell.fn : this.#ready(cell, desc);
  }

  #ready(cell: Cell<F>, desc: DescMessage): F {
    if (!cell.generated) {
      cell.fn = this.#generate(desc);
      cell.generated = true;
    }
    return cell.fn;
  }
}
