// Shared by the bucket-identity attacks: the whole database as plain data (to show a late request
// changed nothing), and the body records nothing refers to (orphans).

function sizeOf(v: unknown): number | undefined {
  if (v instanceof Blob) return v.size;
  if (v instanceof ArrayBuffer) return v.byteLength;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  return undefined;
}

/** Every record of every store, read in one transaction; body records as id and size. */
export async function dbState(db: IDBDatabase): Promise<Record<string, unknown[]>> {
  const names = [...db.objectStoreNames].sort();
  const tx = db.transaction(names, 'readonly');
  const out: Record<string, unknown[]> = {};
  await Promise.all(names.map((name) => new Promise<void>((resolve, reject) => {
    const r = tx.objectStore(name).getAll();
    r.onsuccess = () => {
      out[name] = r.result as unknown[];
      resolve();
    };
    r.onerror = () => reject(r.error);
  })));
  out.bodies = (out.bodies ?? []).map((b) => {
    const record = b as Record<string, unknown>;
    return { id: record.id, size: Object.values(record).map(sizeOf).find((n) => n !== undefined) };
  });
  return out;
}

/**
 * Body records no current object, version or part refers to, and references to bodies that do not
 * exist. Both must stay empty: every body belongs to exactly one of them.
 */
export function orphans(state: Record<string, unknown[]>): { unreferenced: unknown[]; dangling: string[] } {
  type Chunked = { chunks: { id: string }[] };
  const referenced = new Set<string>([
    ...(state.objects as Chunked[]).flatMap((o) => o.chunks.map((c) => c.id)),
    ...(state.versions as Chunked[]).flatMap((o) => o.chunks.map((c) => c.id)),
    ...(state.parts as { bodyId: string }[]).map((p) => p.bodyId),
  ]);
  const ids = new Set((state.bodies as { id: string }[]).map((b) => b.id));
  return {
    unreferenced: (state.bodies as { id: string }[]).filter((b) => !referenced.has(b.id)),
    dangling: [...referenced].filter((id) => !ids.has(id)),
  };
}

/** An account document for `PUT /?account=…`. */
export function accountXml(secret: string, quota?: number): string {
  return `<Account><SecretAccessKey>${secret}</SecretAccessKey>` +
    (quota === undefined ? '' : `<QuotaBytes>${quota}</QuotaBytes>`) + '</Account>';
}
