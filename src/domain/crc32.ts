/**
 * CRC-32 as zlib, PNG and Ethernet compute it (IEEE 802.3: reflected polynomial 0xEDB88320,
 * initial value and final XOR 0xFFFFFFFF). Written here rather than taken from node:zlib,
 * whose `crc32` arrived in Node 22.2: the server supports every Node 22.
 */

/** The 256 partial remainders of one byte each, computed once. */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC-32 of `bytes` as an unsigned 32-bit integer. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) {
    c = (TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  }
  return (c ^ 0xffffffff) >>> 0;
}
