// Bodies held apart from every object (schema.ts, HELD_BODIES): the steps that hold, release and
// drop them. Who holds them, and whether it still runs, is sw/store/holders.ts.
import { get, range, type Read, type Step, type Writes } from '../engine/types.ts';
import { HELD_BODIES } from '../schema.ts';
import { dropBodies } from './bodies.ts';

/** Records `bodies` (stored or kept in the same step) as `holder`'s. */
export const hold = (w: Writes, holder: string, bodies: { id: string; size: number }[]): void => {
  for (const b of bodies) w.put(HELD_BODIES, { holder, bodyId: b.id, size: b.size });
};

/** How many held bodies one step of a drop deletes: a step's size stays bounded. */
const DROP_BATCH = 256;

/**
 * Deletes up to DROP_BATCH of `holder`'s bodies with their records; true when none is left. A held
 * body is referenced by no object, so deleting it hides nothing.
 */
export const dropSome = (holder: string, pieces: boolean): Step<boolean> => function* (w) {
  const held = yield* range(HELD_BODIES, { prefix: [holder] }, { limit: DROP_BATCH });
  for (const b of held) w.delete(HELD_BODIES, [holder, b.bodyId]);
  yield* dropBodies(w, held.map((b) => b.bodyId), pieces);
  return held.length < DROP_BATCH;
};

/** Deletes these of `holder`'s bodies, those it still holds (a step that held one may not have committed). */
export const release = (holder: string, ids: string[], pieces: boolean): Step<void> => function* (w): Generator<Read, void, unknown> {
  const gone: string[] = [];
  for (const id of ids) {
    if (!(yield* get(HELD_BODIES, [holder, id]))) continue;
    w.delete(HELD_BODIES, [holder, id]);
    gone.push(id);
  }
  yield* dropBodies(w, gone, pieces);
};

/** The first holder after `after` (or the first of all). */
export const nextHolder = (after?: string): Step<string | undefined> => function* () {
  const [first] = yield* range(HELD_BODIES, after === undefined ? { prefix: [] } : { prefix: [], start: [`${after}\u0000`] }, { limit: 1 });
  return first?.holder;
};
