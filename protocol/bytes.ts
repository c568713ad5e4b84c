// Bytes in several arrays made one, where a body arrives or is kept in parts but is needed whole;
// a digest's hex as the base64 a header carries.

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

/** A digest written as hex, as the base64 of its bytes (Content-MD5's form). */
export function hexToBase64(hex: string): string {
  let bin = '';
  for (let i = 0; i < hex.length; i += 2) bin += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return btoa(bin);
}
