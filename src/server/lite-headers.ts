/**
 * A Headers-compatible bag that costs almost nothing until it is used as a real
 * `Headers`. undici's Headers validates every name and value on construction; a call
 * through the /v2 door or the gRPC port reads one or two request headers and sets one
 * response header, so those doors use this instead. Names are case-insensitive.
 */
export class LiteHeaders {
  /** Made on first use: a bag that is never written (most trailers) costs one small object. */
  private map: Map<string, string> | undefined;
  /**
   * Node's header record this bag reads through until its first change: most calls read one
   * or two headers, so copying every header into the Map up front was wasted work.
   */
  private raw: Record<string, string | string[] | undefined> | undefined;

  /** Headers from a Node header record; HTTP/2 pseudo-headers (`:path`) are left out. */
  static fromNode(raw: Record<string, string | string[] | undefined>): LiteHeaders {
    const h = new LiteHeaders();
    h.raw = raw;
    return h;
  }

  get(name: string): string | null {
    const key = name.toLowerCase();
    if (this.raw === undefined) return this.map?.get(key) ?? null;
    return key.charCodeAt(0) === 58 ? null : joined(this.raw[key]);
  }
  has(name: string): boolean {
    return this.get(name) !== null;
  }
  set(name: string, value: string): void {
    this.own().set(name.toLowerCase(), String(value));
  }
  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const map = this.own();
    const prev = map.get(key);
    map.set(key, prev === undefined ? String(value) : `${prev}, ${value}`);
  }
  delete(name: string): void {
    this.own().delete(name.toLowerCase());
  }
  getSetCookie(): string[] {
    const v = this.get("set-cookie");
    return v === null ? [] : [v];
  }
  forEach(fn: (value: string, key: string, parent: Headers) => void): void {
    for (const [k, v] of this.own()) fn(v, k, this as unknown as Headers);
  }
  entries(): IterableIterator<[string, string]> {
    return this.own().entries();
  }
  keys(): IterableIterator<string> {
    return this.own().keys();
  }
  values(): IterableIterator<string> {
    return this.own().values();
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.own().entries();
  }
  /** The headers as a plain record, for writing a Node response. */
  toRecord(): Record<string, string> {
    return Object.fromEntries(this.own());
  }

  /** The Map of the headers, copied from Node's record on first use. */
  private own(): Map<string, string> {
    let map = this.map;
    if (map === undefined) {
      map = new Map();
      this.map = map;
    }
    const raw = this.raw;
    if (raw !== undefined) {
      this.raw = undefined;
      for (const name in raw) {
        const v = joined(raw[name]);
        if (v !== null && name.charCodeAt(0) !== 58) map.set(name, v);
      }
    }
    return map;
  }

  /** Whether the bag holds no header (read without copying Node's record). */
  isEmpty(): boolean {
    const raw = this.raw;
    if (raw === undefined) return this.map === undefined || this.map.size === 0;
    for (const name in raw)
      if (name.charCodeAt(0) !== 58 && joined(raw[name]) !== null) return false;
    return true;
  }

  /** This bag typed as fetch Headers, for Connect's interfaces. */
  asHeaders(): Headers {
    return this as unknown as Headers;
  }
}

/**
 * A Node header value as one string (repeated headers joined with ", "). Node's record is a
 * plain object, so a name like `constructor` finds an inherited function: not a header.
 */
function joined(v: unknown): string | null {
  if (typeof v === "string") return v;
  return Array.isArray(v) ? v.join(", ") : null;
}
