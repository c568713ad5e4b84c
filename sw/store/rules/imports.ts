// An import (docs/protocol.md, "Archives") as one unit of work. Its bodies are stored as the archive
// arrives, each recorded in `held-bodies` under the import's id and referenced by nothing else,
// so no read, listing or usage figure sees them. Then one step, the commit, makes the accounts,
// buckets and object records and hands them the bodies — all of it or, when anything refuses,
// nothing. An import that stops before its commit (a broken archive, a killed server, a closed
// tab) leaves only bodies recorded as its own, which its end or a later sweep deletes: it never
// has anything to take back from what others can see, so it can never take back their writes.
import { all, count, get, getRead, type Read } from '../engine/types.ts';
import { ACCOUNTS, BUCKETS, HELD_BODIES, USAGE_EXACT } from '../schema.ts';
import type { ImportPlan, ImportTally } from '../types.ts';
import { dropBodies } from './bodies.ts';
import { restore, type ObjectStep } from './objects.ts';

/**
 * Why a commit wrote nothing. Thrown inside the step, after some of its writes were issued, so that
 * the engine drops them all.
 */
export class ImportRefused extends Error {
  constructor(readonly reason: 'conflict' | 'quota' | 'interrupted', message: string) {
    super(message);
  }
}

/** The commit: the whole import in one step, or a throw of ImportRefused and nothing. */
export function* commit(s: ObjectStep, plan: ImportPlan): Generator<Read, ImportTally, unknown> {
  const t: ImportTally = {
    accountsCreated: 0, accountsUpdated: 0, accountsSkipped: 0, bucketsCreated: 0, bucketsExisting: 0,
    objectsRestored: 0, objectsSkipped: 0, bytesRestored: 0,
  };
  // Every body the import stored is still its own: a sweep that took an import for stopped (one
  // running in another runtime, where that cannot be told) would have deleted them.
  if ((yield* count(HELD_BODIES, { prefix: [plan.importId] })) !== plan.objects.length) {
    throw new ImportRefused('interrupted', 'The bodies this import stored were deleted before it finished (another runtime took it for stopped).');
  }
  for (const a of plan.accounts) {
    const existing = yield* get(ACCOUNTS, [a.accessKeyId]);
    // The root account keeps its own credentials: an archive never changes who administers this service.
    if (existing?.root || (existing && plan.conflict === 'skip')) {
      t.accountsSkipped++;
      continue;
    }
    if (existing && plan.conflict === 'fail') throw new ImportRefused('conflict', `The account "${a.accessKeyId}" exists`);
    s.w.put(ACCOUNTS, { ...a, usedBytes: existing?.usedBytes ?? 0 });
    if (existing) t.accountsUpdated++;
    else {
      s.w.put(USAGE_EXACT, { accessKeyId: a.accessKeyId });
      t.accountsCreated++;
    }
  }
  for (const b of plan.buckets) {
    const [existing, owner] = yield* all(getRead(BUCKETS, [b.name]), getRead(ACCOUNTS, [b.owner]));
    if (existing) {
      t.bucketsExisting++;
      continue;
    }
    // An owner this service does not have gives way to the importer.
    s.w.put(BUCKETS, { ...b, owner: owner ? b.owner : plan.importer, id: crypto.randomUUID() });
    t.bucketsCreated++;
  }
  const unused: string[] = [];
  for (const { object, current, body } of plan.objects) {
    const { bucket, ...record } = object;
    const done = yield* restore(s, bucket, record, body, { current, replace: plan.conflict === 'overwrite' });
    if (done === 'quotaExceeded') throw new ImportRefused('quota', `"${object.key}" in ${bucket} would pass the owner's storage quota`);
    if (done === 'exists') {
      if (plan.conflict === 'fail') throw new ImportRefused('conflict', `"${object.key}" exists in ${bucket}`);
      unused.push(body.id);
      t.objectsSkipped++;
      continue;
    }
    t.objectsRestored++;
    t.bytesRestored += body.size;
  }
  s.w.deleteRange(HELD_BODIES, { prefix: [plan.importId] });
  yield* dropBodies(s.w, unused, s.pieces);
  return t;
}
