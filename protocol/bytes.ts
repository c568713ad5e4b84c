// Bytes in several arrays made one, where a body arrives or is kept in parts but is needed whole.

/** `parts` copied, in order, into one array. */
export function joinBytes(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
