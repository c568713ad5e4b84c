// Complete's rule for the parts it is given (docs/protocol.md, "Multipart rules"), shared by both
// stores, which each run it inside their own write step: every listed part must have been uploaded
// with that ETag, and all but the last must be at least `minPartBytes`. The chosen parts' bodies
// become the object's chunks (no byte is copied); the unlisted ones are dropped.
import type { CompleteRefusal, ObjectPart, ObjectRecord, PartRecord } from './types.ts';

export function completedFrom(
  list: { partNumber: number; etag: string }[],
  uploadedParts: PartRecord[],
  minPartBytes: number,
): { size: number; chunks: ObjectRecord['chunks']; parts: ObjectPart[]; dropped: PartRecord[]; freed: number } | CompleteRefusal {
  const uploaded = new Map(uploadedParts.map((p) => [p.partNumber, p]));
  const chosen: PartRecord[] = [];
  for (const want of list) {
    const part = uploaded.get(want.partNumber);
    if (!part || part.etag !== want.etag) return { refused: 'invalidPart', partNumber: want.partNumber };
    chosen.push(part);
  }
  const small = chosen.slice(0, -1).find((p) => p.size < minPartBytes);
  if (small) return { refused: 'entityTooSmall', partNumber: small.partNumber };
  const kept = new Set(chosen.map((p) => p.bodyId));
  const dropped = uploadedParts.filter((p) => !kept.has(p.bodyId));
  return {
    size: chosen.reduce((n, p) => n + p.size, 0),
    chunks: chosen.map((p) => ({ id: p.bodyId, size: p.size })),
    parts: chosen.map((p) => ({ partNumber: p.partNumber, size: p.size })),
    dropped,
    freed: dropped.reduce((n, p) => n + p.size, 0),
  };
}
