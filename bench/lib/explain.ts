// What RESULTS.md says about each missed target: the cause, with this run's measurements (the
// figures themselves and the diagnostics traced at the end of the run), and what to change in sw/.
// The causes were found with bench/profile.ts, which prints the same timelines in full.
import type { Row } from './report.ts';
import type { PutGetResult } from '../figures/putget.ts';
import type { Diagnostics } from './diagnose.ts';
import type { EnginesResult } from '../figures/engines.ts';
import type { S3EdgeResult } from '../figures/s3-edge.ts';
import { REPLICA_LANES, type ReplicaResult, type TransferId } from '../figures/replica.ts';
import { median } from './stats.ts';
import { explainEngines } from './explain-engines.ts';
import { KiB, MiB, sizeName } from './stats.ts';

export const METHOD_NOTES: string[] = [
  'One headless Chromium with a persistent profile on disk (an incognito-like context keeps IndexedDB in memory and would flatter every figure). Three pages: the built site (dist-site/, controlled by dist-site/sw.js), a page on a second origin controlled by the floor worker, and a page no worker controls (raw IndexedDB, s3rver, the MD5 worker).',
  'Timings are taken inside the page with performance.now() around the operation, so Playwright\'s round trip is never counted. Sides run in rounds, one after another, the order rotated every round, after a warm-up round that is thrown away. value and baseline are medians over the rounds and ratio = value ÷ baseline; the notes give the range of the single rounds\' ratios, which shows how noisy this shared 2-core machine was. A figure stops adding rounds once past its time budget (never under 3 rounds), so a loaded machine gives fewer samples rather than a run over 10 minutes.',
  'Floor: a service worker that only does `await request.blob()` on PUT and answers a ready in-memory Blob on GET (bench/browser/floor-sw.ts). Raw IndexedDB: one `put({id, blob})` per PUT in its own strict readwrite transaction (the durability swbucket uses), one `get` per GET.',
  'PUT bodies are Blobs made in the page before the clock starts. swbucket is called through the page\'s typed client (signed as root) with `checksum: false`: the Content-MD5 the client would compute is the client\'s cost; the worker still hashes every byte for the ETag. A GET ends with every byte in the page: `response.blob()` for the worker and s3rver sides, `blob.arrayBuffer()` for raw IndexedDB (a stored Blob is only a reference; handing it over reads nothing).',
  '1 KiB rows are operations per second (higher is better), timed over batches of 40 sequential operations. The issue gives GET "within 1.3× of the floor" without a size, so it is applied to 1 KiB too, as ops/s ratio ≥ 1/1.3 = 0.77.',
  's3rver 3.7.1 runs in this Node process on a loopback port with a temporary directory and a CORS rule for any origin; requests are unsigned (s3rver accepts them), from the page no worker controls (a controlled page would route them through a worker first). Each new URL costs a CORS preflight for PUT, as it would for any page. s3rver writes files without fsync; swbucket commits with strict durability.',
  'MD5: the worker\'s own protocol/md5.ts bundled into a dedicated browser worker, fed the 64 KiB updates a service worker receives a PUT body in, against node:crypto fed the same updates of the same 64 MiB; the ratio is throughput (node\'s time ÷ the engine\'s).',
  'Figure 8, the Node server, needs no browser (`npm run bench -- --only 8`): `swbucket serve --data DIR` (LMDB; every write synced to disk before its answer), the same server in memory, and s3rver 3.7.1 with a data directory, each in a process of its own started by the run, all directories on the same disk; this process drives them over loopback HTTP with node:http, one kept-alive connection, operations one after another (swbucket\'s requests signed as root, s3rver\'s unsigned). The servers log a line per request to a pipe, as when run in a terminal. s3rver writes its files without fsync.',
  'Complete: each round uploads both objects (not timed), flushes the disk (`sync`, so a strict commit does not wait behind the writeback of 256 MiB of parts, which is Upload Part\'s cost), then times the two Completes back to back. Memory: CDP on the service worker target (Runtime.getHeapUsage, usedSize + backingStorageSize, after HeapProfiler.collectGarbage), sampled as fast as CDP answers during a 256 MiB GET (figure 4\'s object) and during a PUT of 100 MiB, the largest one PUT may have (`limits.putObjectBytes`, which 256 MiB is over), a Blob made in the page before measuring, sent through the typed client, removed afterwards, 3 of each; the peak growth over the start, median of the 3. Control, so that a small growth means something: a 16 MiB Uint8Array made on the worker\'s global through the same CDP session (Runtime.evaluate) must show as about +16 MiB on the same probe; it is deleted afterwards.',
  'Figure 10 (`npm run bench -- --only engines`, about 3 minutes): each engine against its own storage floor. Chromium is the run\'s own (profile on disk; its figure-2 pages); Firefox ESR (puppeteer-core over WebDriver BiDi, a fresh profile on disk), WebKitGTK with ephemeral storage (MiniBrowser through WebKitWebDriver, under Xvfb: IndexedDB there refuses Blobs, so swbucket keeps bodies as 256 KiB pieces) and WebKitGTK with storage on disk (test/browser/support/engines/webkit-launcher.py) are launched one at a time through test/browser/support/engines.ts, each with the built site\'s page (window.swbucket.client) and the storage floor\'s page. The storage floor keeps a Blob per body, or one ArrayBuffer where IndexedDB refuses Blobs (found out as its database opens, as swbucket\'s store does); in ephemeral WebKit a second floor keeping 256 KiB pieces (storage-floor-sw.js?pieceBytes=262144, bench/pages/storage-floor-pieces/) runs in the same rounds. 1 KiB in batches of 20, 1 MiB in batches of 4, 16 MiB one at a time, PUT then GET of what was just written, sides rotated each round after a warm-up round; timed inside the page (Firefox and WebKit give performance.now() in whole milliseconds; WebDriver\'s few ms per call are never counted). Rates, higher is better; ratio = swbucket ÷ floor, target ≥ 0.5 everywhere. Also per engine: the client\'s PUT signature (50 in a row) and MD5 of 16 MiB in a dedicated worker (the worker\'s protocol/md5.ts, 64 KiB updates, median of 3). Pieces vs Blobs: the built sw.js registered a second time as /sw-pieces.js?bodies=pieces on an origin of its own in the run\'s Chromium (served under another name so that the site\'s startService() keeps it instead of registering plain sw.js over it), beside the site\'s own; ratio = pieces\' rate ÷ Blobs\'. Memory: VmRSS, RssAnon and RssShmem of every browser process (the processes below this Node process whose program is firefox or chromium) read from /proc every 50 ms, before (mean of 3), peak during, and 1 s after a 100 MiB PUT of a Blob made in the page beforehand: to a Node server from a page no worker controls, to /__swbucket (the worker answers its hello without reading the body), and through window.swbucket.client.putObject (checksum off); 3 of each, rotated; Firefox in a fresh launch, Chromium in the run\'s own.',
  'Small parts: 200 Upload Parts of the same 1 KiB Blob into one upload against 200 PUTs of it to distinct keys, 8 in flight each, in interleaved rounds after a warm-up round; creating the upload, aborting it and deleting the keys are not timed.',
  'S3 through the worker (figure 11, `npm run bench -- --only 11`; `--only s3` with figure 12): the AWS SDK v3 (@aws-sdk/client-s3) and aws4fetch bundled by esbuild into one script (bench/browser/s3-page.ts) added to the built site\'s page when the figure starts, as an app\'s bundler would bundle them (test/browser/engine-s3.test.ts). Every side is a request from that page to its worker, stored in the same bucket as root: SVC through the page\'s typed client (checksum off, as in figure 2; it sends a Blob); S3 to `http://{bucket}.s3.localhost/{key}` with aws4fetch (SigV4 signed in the page, UNSIGNED-PAYLOAD, Content-Length not signed; GET read with `blob()` as SVC\'s is) and with the SDK\'s S3Client as an app uploading Blobs sets it up (`requestChecksumCalculation: \'WHEN_REQUIRED\'`, aws-sdk-js-v3 #6834; UNSIGNED-PAYLOAD, Content-Length signed; GET read with `Body.transformToByteArray()`). PUT-only sides take the SDK\'s requests apart: aws4fetch with the body\'s SHA-256 and CRC32 (x-amz-content-sha256, x-amz-checksum-crc32, computed before the clock starts), aws4fetch signing Content-Length as the SDK does (a browser withholds that header from the worker), and the SDK with its defaults and a Uint8Array body (it computes the CRC32 and the SHA-256 itself; the browser cannot send a Blob that way, #6834); and, not S3 at all, SVC\'s own PUT with its body sent in a Request made of fetch\'s arguments, as aws4fetch sends one (the page\'s hand-off of such a body, apart from the dialect). 1 KiB in samples of 20 one after another and 32 with 8 in flight, 1 MiB in samples of 4 and 16 with 4 in flight, PUT then GET of what was just written, every side in the same rounds (order rotated, a warm-up round thrown away). ms per operation (in flight: wall ÷ operations); ratio = S3\'s time ÷ SVC\'s; target ≤ 1.1 on the aws4fetch rows (the service\'s S3 edge); the SDK rows carry its client\'s cost too and are reported. Beside the rounds: the SDK with a request handler that answers at once (its own time per call), signing alone in the page, and 1 MiB PUTs to the floor worker with the body a Blob and a Uint8Array (what the browser itself costs to hand a worker bytes).',
  'The server in S3\'s dialect (figure 12, no browser): figure 8\'s `swbucket serve` in memory and s3rver 3.7.1 with a data directory, each a process of its own, the AWS SDK v3 in this process the client of both with its defaults (path style; a Buffer body\'s SHA-256 as x-amz-content-sha256 and its CRC32 as x-amz-checksum-crc32, which swbucket checks and s3rver, which only checks the header\'s form, does not; GetObject asks for the checksum back, which swbucket returns and the SDK then checks); swbucket signed as root, s3rver as its default account S3RVER/S3RVER (whose signatures it checks). 1 KiB: 40 PUTs then 40 GETs one after another, and 320 each with 16 in flight; 1 MiB: 4 PUTs then 4 GETs; ListObjectsV2 of 1,000 objects put once beforehand (3 listings per sample); 9 rounds at most in 60 s, sides rotated. Reported without targets.',
  "Archives (figure 9): an import stores each object's bytes as they arrive, then makes every object in one commit step (sw/store/rules/imports.ts). The client sends the archive's Content-MD5 by default, hashing the whole archive in a worker before sending it: that pass is the client's, as for a PUT with checksum on, and the row without it (checksum: false, like every PUT side here) shows the import's own cost. The many-objects row imports an export of 2,000 × 1 KiB objects over themselves (conflict=overwrite) against PUTs of the same 2,000 objects, 8 in flight.",
  "Replicas (figure 13, `npm run bench -- replica`, about 6½–8½ minutes): `swbucket serve --dialect s3` in memory, a process of its own started for the figure, is the remote (root credentials, path style; it allows CORS from every origin). The replica side is the built site's worker, driven from its page through service.replicas; the AWS SDK v3 (bundled into the page no worker controls by bench/browser/replica-page.ts, `requestChecksumCalculation` and `responseChecksumValidation` 'WHEN_REQUIRED', as an app sending Blobs sets it, figure 11) is the baseline, talking to the same remote directly. Push: 1,000 × 1 KiB (and 10 × 16 MiB) PUT into a local bucket, 8 (2) in flight, then the bucket bound to a fresh remote bucket (binding puts what a bucket holds into its outbox, as each write into a bound bucket does) in 'pull' mode, whose first round probes the remote's conditional writes and pushes nothing (none of it timed); timed: add() again in two-way (the same remote: no probe; add() starts a round) and syncNow() until that round completed, checked to have pushed every object. 16 MiB is at multipartBytes' default (16 MiB, not over it): a plain PUT each; a side with multipartBytes 8 MiB (2 parts of 8 MiB) runs in the same rounds, reported without a target. Pull: the objects put on the remote once from this process; each round binds a fresh local bucket in 'push' mode (its first round probes and pulls nothing), then times add() in two-way and syncNow() until it pulled every object. The SDK's sides: PutObjects of the same Blobs (GetObjects of the same objects, each body read into a Blob with `new Response(Body).blob()`; and the pull's baseline, the same GetObjects with each body kept in the page's own IndexedDB as it arrives, up to 1 MiB as bytes and larger as a Blob, strict commits, what arrived during one commit going together in the next) all at once, as `Promise.all` would send them (Chromium runs 6 at a time to one host over HTTP/1.1), and 4 at a time (the replica's earlier pool); each PUT to a new URL costs a CORS preflight on every side, and so does each of the SDK's GETs (signed in headers) unless the browser's preflight cache still holds that URL's from an earlier round (the same keys every round), where the replica's GETs are signed in their URL and need none. ms for the whole set, ratio = replica ÷ SDK all at once (a pull's: ÷ the SDK into IndexedDB, the same transfer: objects kept in this browser; ÷ the SDK into memory reported beside, without a target), target ≤ 1.3; rounds rotated after a warm-up round, whose replica round is traced inside the worker (fetch until the answer's headers and IndexedDB transactions from creation to complete, wrapped through CDP and put back after). Burst (one sample each): 1,000 × 1 KiB PUTs, 8 in flight, into a bucket bound to a live two-way replica against an unbound bucket, then the status announcements and the round's progress events watched until nothing came for 1.5 s. Acknowledgement: 40 × 1 KiB (8 × 1 MiB) PUTs one after another through the page's typed client (checksum off) into buckets with no replica, with a paused replica (pause(): its writes enter the outbox, nothing is pushed), both empty besides the timed keys and both holding 1,000 other objects, and with a live replica holding 1,000 objects, for which as many other writes of the size are made (not timed) and a syncNow() started just before the timed PUTs (not awaited; it ran through them, the notes say how much); the keys are the same every round, so the buckets do not grow; after each side's turn the worker is let settle (its announcements, and for the live side a round pushing what the PUTs left) before the next. ms per PUT; ratio = replicated ÷ no replica, target ≤ 1.1.",
];

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '?');

function sizeOf(name: string): number | undefined {
  const m = /(\d+) (KiB|MiB)/.exec(name);
  return m ? Number(m[1]) * (m[2] === 'MiB' ? MiB : KiB) : undefined;
}

const line = (r: Row) => `**${r.name}**: ratio ${r.ratio.toFixed(2)} against ${r.target} (swbucket ${f1(r.value)} ${r.unit}, baseline ${f1(r.baseline)} ${r.unit})`;

/** The RESULTS.md sections for missed targets, grouped by cause, and other observations. */
export function explainMisses(
  rows: Row[], putget: PutGetResult | undefined, diag: Diagnostics | undefined, engines?: EnginesResult, s3edge?: S3EdgeResult,
  replica?: ReplicaResult,
): { misses: string[]; observations: string[] } {
  const misses: string[] = [];
  const observations: string[] = [];
  const missed = rows.filter((r) => r.pass === false);
  const md5MiBps = rows.find((r) => r.figure === 1 && r.target !== null)?.value ?? NaN;
  const dur = diag?.durability;
  const durText = dur
    ? `raw strict put from the page ${f1(dur['1 KiB']!.strict)} ms for 1 KiB and ${f1(dur['1 MiB']!.strict)} ms for 1 MiB, relaxed ${f1(dur['1 KiB']!.relaxed)} and ${f1(dur['1 MiB']!.relaxed)} ms`
    : '';
  const done = new Set<Row>();

  // ---- PUT: against the floor and s3rver.
  const puts = missed.filter((r) => /^PUT .* vs (storage floor worker|floor worker|s3rver)$/.test(r.name));
  if (puts.length && putget) {
    puts.forEach((r) => done.add(r));
    const out = [`### PUT`, '', ...puts.map((r) => `- ${line(r)}`), ''];
    const sizes = [...new Set(puts.map((r) => sizeOf(r.name)!).filter((x) => x >= MiB))].sort((a, b) => a - b);
    if (sizes.length) {
      out.push('What bounds it. The in-memory floor only reads the body; the storage floor reads it with `request.blob()` (inside the browser) and does one strict put of that Blob. swbucket must also bring every byte into the worker to hash it (the ETag is the MD5: figure 1\'s engine throughput, in the same thread that reads the body) and hand the bytes back to the browser as Blobs (sw/core/body.ts: folded every 8 MiB, so the worker never holds a body whole), then persist them in IndexedDB (a raw strict put of the same Blob from the page, figure 2). One after another those add up to the "serial" bound; if reading, hashing and writing overlapped perfectly the best case would be the slowest of the three (the floor column is the in-memory floor):',
        '', '| size | floor ms | MD5 ms | raw IndexedDB put ms | serial bound | overlapped best case | swbucket ms | swbucket ÷ floor |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
      for (const size of sizes) {
        const m = putget.medians[size]!;
        const md5 = (size / MiB) / md5MiBps * 1000;
        const serial = m.floor.put + md5 + m.idb.put;
        const best = Math.max(m.floor.put, md5, m.idb.put);
        out.push(`| ${sizeName(size)} | ${f1(m.floor.put)} | ${f1(md5)} | ${f1(m.idb.put)} | ${f1(serial)} ms = ${(serial / m.floor.put).toFixed(2)}× | ${f1(best)} ms = ${(best / m.floor.put).toFixed(2)}× | ${f1(m.sw.put)} | ${(m.sw.put / m.floor.put).toFixed(2)} |`);
      }
      out.push('', 'Overlap was built and taken out (docs/browser.md, "Large PUT bodies"): writing the body ahead in chunks while it streams in, each chunk a strict transaction of its own, made 1 MiB and 16 MiB PUTs slower when it started at 256 KiB (2.17× and 1.67× the storage floor against 1.51× and 1.45× without), because every chunk is a commit with its own flush and blob file and with two cores the browser\'s IndexedDB writes and the worker\'s hashing compete for the same CPUs; from 8 MiB on, 64 MiB PUTs were no faster (1.26× against 1.31×), and under load IndexedDB refused the chunks in Chromium\'s first seconds. A probe worker that let the browser gather the body (\`request.blob()\`, as the storage floor does), wrote it in a strict transaction while hashing it, and wrote the record in a second one was no faster at 16 MiB (94 ms either way; the write slowed from 35 to 62 ms by the reading beside it) and 19% faster at 64 MiB, and \`request.blob()\` reads a body to its end before any size or quota limit can stop it. So a PUT is read, hashed, then written in one transaction, and the serial bound is what it pays.', '');
    }
    const t = diag?.shapes['PUT 1 MiB'];
    const t1k = diag?.shapes['PUT 1 KiB'];
    if (t) {
      out.push(`Where swbucket's own time goes (traced in this run inside the worker, medians of 5; bench/profile.ts prints whole timelines): a 1 MiB PUT took ${f1(t.page)} ms seen from the page and the worker's answer was ready ${f1(t.response)} ms after the fetch event${t1k ? ` (1 KiB: ${f1(t1k.page)} and ${f1(t1k.response)} ms)` : ''}.`,
        `- Read-only transactions before the write: ${t.readTx || 'none'} (answered at, ms after the fetch event; the account and the bucket come from the store's cache, sw/store/idb.ts, and the write transaction checks the bucket itself).`,
        `- Moving the body out of the worker as Blobs: ${f1(t.newBlobMs)} ms for 1 MiB.`,
        `- The strict write transaction: ${f1(t.writeMs)} ms, of which ${f1(t.commitMs)} ms after its last request, waiting for the flush${t1k ? ` (1 KiB: ${f1(t1k.writeMs)} and ${f1(t1k.commitMs)} ms)` : ''}. On this disk: ${durText}.`,
        `- The request log is written ${f1(t.logMs)} ms long, once for all the requests of ~40 ms (sw/log/ring.ts), after the answers.`, '');
    }
    out.push('What is left, and why it is not done:',
      '1. `durability: \'relaxed\'` for PUTs would take the flush out of every answer (the difference between the strict and relaxed raw puts above); the service promises that an acknowledged write is on disk (docs/browser.md, "Strict durability"), so it stays strict.',
      '2. Overlap, for which chunk commits cost more than they save here (above). A faster MD5 (figure 1) shortens the serial part directly.',
      `Against s3rver: s3rver writes files without fsync, keeps the body in Node rather than copying it between two processes, and, unsigned here, checks no signature; swbucket is ahead of it only where no body has to be hashed and flushed (1 KiB, and every GET).`, '');
    misses.push(out.join('\n'));
  }

  // ---- GET against the floor.
  const gets = missed.filter((r) => /^GET .* vs (storage floor worker|floor worker|s3rver)$/.test(r.name));
  if (gets.length) {
    gets.forEach((r) => done.add(r));
    const out = [`### GET`, '', ...gets.map((r) => `- ${line(r)}`), ''];
    for (const size of [...new Set(gets.map((r) => sizeOf(r.name)!))]) {
      const t = diag?.shapes[`GET ${sizeName(size)}`];
      const m = putget?.medians[size];
      if (!t || !m) continue;
      out.push(`GET ${sizeName(size)} (figure: swbucket ${f1(m.sw.get)} ms, floor ${f1(m.floor.get)} ms, raw IndexedDB read from the page ${f1(m.idb.get)} ms). Traced inside the worker (medians of 5): its answer was ready ${f1(t.response)} ms after the fetch event, after its reads (answered at, ms: ${t.readTx}): the account and the bucket come from the store's cache; one read-only transaction reads the bucket (to check it is still the one authorised), the object record and, when the store knows which body the key had when last written or read, that body record, all together (\`getObject()\`, sw/store/idb.ts): one round trip to IndexedDB, as the storage floor makes, and none for the in-memory floor. The request log is written later, for ~40 ms of requests at once (${f1(t.logMs)} ms, sw/log/ring.ts). In the same traces the page had every byte ${f1(t.page)} ms after its fetch(): ${f1(t.page - t.response)} ms of it outside the worker's handler, the browser taking the request to the worker and the answer and its body back to the page (a stored Blob is read from IndexedDB's file; the in-memory floor's is in memory).${(() => {
        const f = diag?.storageFloorGet?.[`GET ${sizeName(size)}`];
        return f ? ` The storage floor's worker, traced the same way, answered at ${f1(f.response)} ms and its page had every byte at ${f1(f.page)} ms: swbucket's handler costs ${f1(t.response - f.response)} ms more inside the worker, and ${f1((t.page - t.response) - (f.page - f.response))} ms more passes outside it (the signed request's client side, which the floor has none of, and the browser's handling of the request and answer).` : '';
      })()}`, '');
    }
    const sp = diag?.getSplit;
    if (sp) {
      out.push(`Seen from the page, a 1 KiB GET split in parts (medians): swbucket's client signs in ${sp.sw.sign.toFixed(2)} ms, the response headers arrive ${sp.sw.headers.toFixed(2)} ms after fetch() (floor: ${sp.floor.headers.toFixed(2)} ms), and reading the body takes ${sp.sw.body.toFixed(2)} ms more (floor, from memory: ${sp.floor.body.toFixed(2)} ms). The headers are the worker's handler (the transactions above); a body up to 16 KiB is stored and answered as bytes, not as a Blob file (sw/store/idb.ts, \`INLINE_MAX_BYTES\`).`, '');
    }
    out.push('What is left is the service around the read, which the storage floor does not do: routing, the signature check (WebCrypto\'s verify, an asynchronous step of its own), the bucket check, and the response headers (CORS, request id, the object\'s own headers): the handler\'s difference traced above. Against the in-memory floor, no stored read can close the gap for 1 KiB: the floor answers bytes it already holds, while any durable store makes at least one IndexedDB round trip.', '');
    misses.push(out.join('\n'));
  }

  // ---- Figure 11: S3's edge in the worker against SVC's.
  const s3 = explainS3(rows, missed, s3edge);
  s3.explained.forEach((r) => done.add(r));
  misses.push(...s3.misses);

  // ---- Figure 13: replicas against the AWS SDK, and a replica's cost to a local PUT.
  const rep = explainReplica(rows, missed, replica);
  rep.explained.forEach((r) => done.add(r));
  misses.push(...rep.misses);

  // Figure 10: each engine against its own storage floor (bench/lib/explain-engines.ts).
  const eng = explainEngines(rows, engines);
  eng.explained.forEach((r) => done.add(r));
  misses.push(...eng.misses);

  for (const r of missed.filter((x) => !done.has(x))) {
    if (r.name.startsWith('Complete')) {
      const c32 = diag?.shapes['Complete 32 parts'];
      const c1 = diag?.shapes['Complete 1 part'];
      const traced = c32 && c1
        ? ` In this run's traces the write transaction took ${f1(c32.writeMs)} ms for 32 parts and ${f1(c1.writeMs)} ms for 1 (answer at ${f1(c32.response)} and ${f1(c1.response)} ms).`
        : '';
      misses.push(`### Complete\n\n- ${line(r)}\n\nComplete runs the same requests for 32 parts as for 1 (parts.getAll, one objects.put, one range delete of the parts, uploads.delete): no byte is copied and its cost does not grow with the object.${traced} The slow rounds are stalls outside that transaction on a loaded machine (a read-only transaction, or a \`new Blob\` of a few hundred bytes, taking 15 ms while the worker's thread waits for a core); \`node --import tsx bench/profile.ts complete 262144 5\` prints whole timelines. What swbucket could still remove from every Complete: the three read-only transactions before the write (account, bucket, upload) and the second pass over the XML body (\`md5OfText()\` builds a Blob and reads it back asynchronously, sw/core/ops/multipart.ts).\n`);
    } else if (r.figure === 7 && r.name.includes('PUT')) {
      const control = /control: [^;]*/.exec(r.notes)?.[0] ?? '';
      misses.push(Number.isFinite(r.value)
        ? `### ${r.name}\n\n- **${r.name}**: peak growth ${f1(r.value)} MiB against ${r.target} (${f1(r.baseline)} MiB sent; ${control}).\n\nThe worker holds at most 8 MiB of a body (sw/core/body.ts folds what it has read into a Blob every 8 MiB); the rest of the peak is the 64 KiB chunks the request stream handed over, waiting for V8 to collect them. Reading into one reused buffer (a BYOB reader) made no garbage and peaked at +2.6 MiB, but then nothing prompted a collection, earlier PUTs' Blobs stayed alive in the browser, and in Chromium's first seconds new ones were refused (docs/browser.md, "Large PUT bodies"); folding every 1 MiB peaked at +33 MiB and failed the same way. The bound is V8's collection threshold for that garbage, not the body's size (before: +100 MiB for 100 MiB).\n`
        : `### ${r.name}\n\n- **${r.name}**: ${r.notes.split(';')[0]}.\n\nThe worker refused the PUT, so its heap during one could not be measured (its size is \`limits.putObjectBytes\`, sw/core/limits.ts). The growth seen until the refusal is in the notes.\n`);
    } else if (r.figure === 6 && r.name.startsWith('PUT')) {
      misses.push(`### ${r.name}\n\n- ${line(r)}\n\nFour PUTs in flight share IndexedDB's one writer: readwrite transactions over the same stores run in turn. The writes that arrive while one commits run together in the next transaction, sharing its flush (group commit, sw/store/idb.ts \`write()\`), but each still waits for a strict flush before it is answered, while s3rver writes four files at once without fsync.\n`);
    } else if (r.figure === 6 && r.name.startsWith('Delete')) {
      misses.push(`### ${r.name}\n\n- ${line(r)}\n\nOne transaction for the whole batch, as the issue asks, of about 8 requests: the records come from one read of the keys' span and go in one range delete when the span holds nothing else (a folder); the bodies, whose ids start with their bucket and key, go in one range delete when their run of ids holds exactly them (sw/store/idb.ts, \`deleteBodyIds\`). What is left is the strict commit of 2,000 deleted records, where s3rver unlinks files without fsync, and the XML: the 1,000-key document is checked and parsed by fast-xml-parser in the worker (two passes, about 8–15 ms, before the transaction opens) and built and hashed (Content-MD5) by the typed client, where the s3rver side of the figure sends a ready string.${diag?.deleteMany ? ` In this run's trace: the transaction opened ${f1(diag.deleteMany.txOpenedAt)} ms after the fetch event, its ${diag.deleteMany.requests} requests were answered ${f1(diag.deleteMany.requestsMs)} ms later, and the commit took ${f1(diag.deleteMany.commitMs)} ms more (answer at ${f1(diag.deleteMany.response)} ms).` : ''}\n`);
    } else if (r.figure === 8) {
      misses.push(`### ${r.name}\n\n- ${line(r)}\n\nThe in-memory server runs the worker's own handler and IndexedDB store, over fake-indexeddb (IndexedDB written in JavaScript, run on the server's one thread: every request of a transaction is a turn of Node's event loop), where s3rver writes each object to a file of its own without fsync. With 16 connections, group commit lets the writes that arrive together share a transaction (sw/store/idb.ts \`write()\`); what is left is the store's JavaScript itself, on the same thread as the HTTP parsing.${(() => {
        const m = /per-round ratios ([\d.]+)–([\d.]+) \(median ([\d.]+)\)/.exec(r.notes);
        return m ? ` Its single rounds' ratios in this run: ${m[1]}–${m[2]}, median ${m[3]}.` : '';
      })()}\n`);
    } else if (r.figure === 1) {
      misses.push(`### MD5\n\n- ${line(r)}\n\nThe engine is hash-wasm (WebAssembly, one thread); OpenSSL uses hand-written assembly. WebCrypto has no MD5, so there is no native engine a service worker can call; what is left is a faster WebAssembly MD5 (SIMD does not help MD5, whose rounds are serial) or larger updates (the 4 MiB row).\n`);
    } else {
      misses.push(`### ${r.name}\n\n- ${line(r)}\n\nNo explanation recorded for this figure yet: profile it with bench/profile.ts.\n`);
    }
  }

  if (diag?.deleteMany) {
    const d = diag.deleteMany;
    const commitMostly = d.commitMs > d.requestsMs;
    observations.push(`- Figure 6, Delete Multiple of 1,000 objects, traced in the worker: answer at ${f1(d.response)} ms; the transaction opened at ${f1(d.txOpenedAt)} ms (before it: the 1,000-key XML read, checked and parsed); ${d.requests} IndexedDB requests in one transaction (${d.breakdown}) answered by ${f1(d.requestsMs)} ms, then ${f1(d.commitMs)} ms until the transaction committed. ${commitMostly
      ? 'Most of it is the commit of a strict transaction that deletes 2,000 records (objects and their bodies).'
      : 'Most of it is the requests.'}`);
  }
  observations.push(...eng.observations, ...s3.observations, ...rep.observations);
  return { misses, observations };
}

const ms2 = (x: number | undefined, digits = 2) => (x !== undefined && Number.isFinite(x) ? x.toFixed(digits) : '?');

/**
 * Figure 11 (and 12): a missed S3 edge row with what this run measured beside it, and, whenever the
 * figure ran, what the SDK's requests make the worker do, side by side (aws4fetch's variants).
 */
function explainS3(rows: Row[], missed: Row[], r: S3EdgeResult | undefined): { misses: string[]; observations: string[]; explained: Row[] } {
  const misses: string[] = [];
  const observations: string[] = [];
  const edge = missed.filter((x) => x.figure === 11);
  if (edge.length && r) {
    const out = ['### S3\'s edge in the worker', '', ...edge.map((x) => `- ${line(x)}; ${/per-round ratios [^;]*/.exec(x.notes)?.[0] ?? ''}`), ''];
    const sign = r.sign;
    out.push('What the S3 edge adds to SVC\'s, request by request, none of it proportional to the body (UNSIGNED-PAYLOAD: no byte is hashed but for the MD5 both dialects make):',
      `- In the page: aws4fetch signs in ${ms2(sign?.a4f, 3)} ms against ${ms2(sign?.svc, 3)} ms for the SVC client (SigV4 hashes the canonical request and signs, two asynchronous WebCrypto calls, where SVC signs once).`,
      `- In the worker: SigV4's check hashes the canonical request with crypto.subtle.digest before its verify (protocol/sigv4.ts \`stringToSignV4\`), one more asynchronous WebCrypto step than SVC's check (${ms2(sign?.digest, 3)} ms for one digest in the page), and builds the canonical request from the signed headers (sw/core/auth-s3.ts).`,
      'Measured, these are hundredths of a millisecond, far less than the misses: what is left of a miss is not in them, but either this shared machine (the single rounds\' ratios above) or a step this figure does not take apart (bench/profile.ts and lib/trace.ts time a request inside the worker). A request the SDK sends costs the worker more than aws4fetch\'s (below, "Also seen").', '');
    misses.push(out.join('\n'));
  }
  if (r) {
    const sizes = Object.keys(r.medians).map(Number).sort((a, b) => a - b);
    const lines = ['- Figure 11, what the AWS SDK\'s requests make the worker do (median ms per PUT, one after another, same rounds):', '',
      '| size | SVC | aws4fetch | + Content-Length signed | + SHA-256 and CRC32 | SDK, Blob | SDK alone (no service), Blob | SDK defaults, bytes | SDK alone, bytes |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |'];
    for (const size of sizes) {
      const m = r.medians[size]!;
      const alone = r.sdkAlone[size];
      lines.push(`| ${sizeName(size)} | ${ms2(m.svc?.put)} | ${ms2(m.a4f?.put)} | ${ms2(m.a4fLen?.put)} | ${ms2(m.a4fSums?.put)} | ${ms2(m.sdk?.put)} | ${ms2(alone?.putBlob)} | ${ms2(m.sdkBytes?.put)} | ${ms2(alone?.putBytes)} |`);
    }
    const big = r.medians[MiB];
    const f = r.bodyForms;
    lines.push('',
      '  - The SDK signs Content-Length, which a browser does not show a worker: the worker then reads the body whole (`req.blob()`) before it can check the signature, and hands that Blob on to be hashed and stored (sw/core/handler.ts `withheldLength`, sw/core/auth-s3.ts); aws4fetch signing Content-Length pays the same.',
      '  - Its default checksums make the worker compute the body\'s SHA-256 and CRC32 beside the MD5 (sw/core/payload.ts): SHA-256 in a hash-wasm hasher made for each request (a WebAssembly instance each time, protocol/checksums.ts `digestOf`; the MD5 hashers are pooled for that reason, protocol/md5.ts), CRC32 one byte at a time through a table in JavaScript, its running value kept in a closure (protocol/checksums.ts `crc`).'
        + (big?.a4fSums?.put !== undefined && big.a4f?.put !== undefined ? ` For 1 MiB: ${ms2(big.a4fSums.put - big.a4f.put)} ms more than without them.` : ''),
      `  - With a bytes body (its only way to send checksums from a browser), most of the time is the browser's: ${f ? `a 1 MiB PUT to the floor worker, which does nothing but \`request.blob()\`, took ${ms2(f.bytes)} ms with the body given to fetch() as a Uint8Array and ${ms2(f.blob)} ms as a Blob` : 'a body given to fetch() as bytes reaches a worker far slower than a Blob'}; swbucket's own client sends every body as a Blob.`,
      '  - GET: the SDK reads the body as a stream into one array in JavaScript (`transformToByteArray()`, the "SDK alone" time in the GET rows\' notes) where the other sides take a Blob.', '');
    observations.push(lines.join('\n'));
  }
  const server = rows.filter((x) => x.figure === 12);
  const put1m = server.find((x) => /PUT 1 MiB/.test(x.name));
  if (put1m) {
    observations.push(`- Figure 12, the server in S3's dialect against s3rver with the AWS SDK: a 1 MiB PUT ${ms2(put1m.value)} ms against ${ms2(put1m.baseline)} ms (${put1m.ratio.toFixed(2)}×). The SDK in Node sends every Buffer body with its SHA-256 and a CRC32; swbucket checks both as the body arrives, on the server's one thread, with the same code as the worker (sw/core/payload.ts: the CRC32 a byte at a time in JavaScript, the SHA-256 in hash-wasm), while s3rver checks neither (only the form of x-amz-content-sha256) and stores the bytes.\n`);
  }
  return { misses, observations, explained: r ? edge : [] };
}

const ms0 = (x: number | undefined) => (x !== undefined && Number.isFinite(x) ? x.toFixed(0) : '?');
const pct = (x: number) => `${Math.round(100 * x)}%`;

/**
 * Figure 13: the replica's missed transfer rows with where its lanes' time went (its warm-up round
 * traced inside the worker) and the SDK with fewer requests in flight; the missed
 * acknowledgement rows with what every write to a bound bucket makes the worker do; and, whenever
 * the figure ran, what a burst of writes into a bound bucket set off.
 */
function explainReplica(rows: Row[], missed: Row[], r: ReplicaResult | undefined): { misses: string[]; observations: string[]; explained: Row[] } {
  const misses: string[] = [];
  const observations: string[] = [];
  const explained: Row[] = [];
  if (!r) return { misses, observations, explained };
  const idOf = (x: Row): TransferId | undefined => {
    const m = /^replica (push|pull) [\d,]+ × (\d+ [KM]iB)(?! \(multipart)/.exec(x.name);
    return m ? (`${m[1]}-${m[2] === '1 KiB' ? '1k' : '16m'}` as TransferId) : undefined;
  };
  const transfers = missed.filter((x) => x.figure === 13 && idOf(x) !== undefined);
  if (transfers.length) {
    explained.push(...transfers);
    const out = ['### Replica push and pull against the AWS SDK', ''];
    for (const x of transfers) {
      const id = idOf(x)!;
      const s = r.transfers[id];
      const sdk4 = median((s.sdk4 ?? []).map((v) => v.ms));
      const pull = id.startsWith('pull');
      out.push(`- ${line(x)}; the SDK 4 at a time ${ms0(sdk4)} ms (replica ÷ that ${(x.value / sdk4).toFixed(2)}); ${/per-round ratios [^;]*/.exec(x.notes)?.[0] ?? ''}`);
      const t = r.traces[id];
      if (t) {
        const k = (name: string) => t.kinds[name];
        const req = k(pull ? 'fetch GET' : 'fetch PUT');
        const w = k('write');
        out.push(`  - Its warm-up round (not kept), traced inside the worker, took ${ms0(t.wallMs)} ms. `
          + `${pull ? 'GETs' : 'PUTs'} to the remote: ${req?.n ?? '?'}, median ${f1(req?.medianMs ?? NaN)} ms each until the answer's headers (up to ${REPLICA_LANES} in flight, six on the wire; large ones four at a time). `
          + `IndexedDB write transactions: ${w?.n ?? '?'} (median ${f1(w?.medianMs ?? NaN)} ms from creation to complete), ${ms0(w?.sumMs)} ms in all, ${pct((w?.sumMs ?? 0) / t.wallMs)} of the round's wall time: IndexedDB runs one write transaction at a time, so near 100% the round goes as fast as the store takes its writes.`);
      }
    }
    const burst = r.burst;
    out.push('',
      `What bounds it. The replica has up to ${REPLICA_LANES} small objects in flight (four large ones, whose bodies are committed together when they meet; sw/replica/sync.ts): the browser puts six on the wire to one host and starts the next the moment a connection frees, where a lane of its own would first come round in the worker to sign the next request. A push reads small objects 32 at a time in one read step and sends the bytes kept in their record as they are (no Blob: Chromium makes each in its browser process, about 1 ms each); each outcome (sync record, outbox entry) is written behind the lanes, several keys per transaction (group commit). `
        + `A pull GETs each object, signed in its URL so that the browser sends it without a CORS preflight, and hashes it as it arrives (the local ETag is the bytes' MD5; bodies up to 1 MiB stay bytes, larger ones are hashed from the Blob once read), then stores 32 keys in one write step (store.replica.pulledMany: what each key holds read in one round for all). A CPU profile of the worker in the pull of 1,000 × 1 KiB shows it idle about 45% of the round, and its own work mostly fetch() calls themselves (0.72 ms each, 21% of the round): in Chromium a fetch() call costs a service worker's thread 0.55–0.6 ms and a page's 0.35–0.38 ms (1,000 cross-origin GETs of a trivial server, 16 in flight, measured side by side), whatever its options, so the SDK's side pays less per request. Without its store writes, the same round moved 1,000 keys in about 2.66 s against 2.75–2.9 s with them: the requests, not the writes, bound a pull of small objects. More lanes (64) did not change it. `
        + `The baseline of a pull stores what it GETs too, in the page's own IndexedDB, committed strictly, what arrived during one commit going together in the next (the row "vs AWS SDK into memory" shows the SDK keeping nothing, as a reload would lose it): IndexedDB takes one write transaction at a time, and on this disk ten 16 MiB Blobs fetched and put one transaction each took 1.1–1.3 s in a raw page with a profile on disk (about 1.2× the fetch alone), so a pull is bound by the commits, not the wire. The replica does more than its baseline besides: it hashes every body (16 MiB: about 80 ms on the worker's thread, from the Blob once read), and it commits each key's record, sync state and usage with its body; IndexedDB's commits share this machine's two cores with the browser's network service and the remote.`, '',
      'What could change: hashing large bodies off the worker\'s thread, or trusting the remote\'s ETag where it is a plain MD5 (losing the check of the bytes that arrived). Tried: hashing large bodies as they arrive, read in the worker and gathered into a Blob 4 MiB at a time (10 × 16 MiB: 1.64 s against 1.15 s reading the answer into a Blob and hashing it from there). Not done: pulls committed with relaxed durability (ten puts of a 16 MiB Blob 0.56–0.81 s relaxed, 0.75–0.86 s strict, in the raw page): a pull lost whole would be pulled again, but a relaxed commit need not flush its Blob files, and whether a later strict commit flushes them is the engine\'s choice (not verified in any of the three), so a power cut could leave a record whose bytes are gone.', '');
    misses.push(out.join('\n'));
  }

  const acks = missed.filter((x) => x.figure === 13 && x.name.startsWith('PUT '));
  if (acks.length) {
    explained.push(...acks);
    const st = r.statusMs;
    const out = ['### A local PUT\'s acknowledgement with a replica', '', ...acks.map((x) => `- ${line(x)}; ${/status announcements per PUT [\d.]+/.exec(x.notes)?.[0] ?? ''}; ${/per-round ratios [^;]*/.exec(x.notes)?.[0] ?? ''}`), '',
      'A write to a bucket bound to a replica adds its outbox record to its own write step, and sets off an announcement of the replica\'s status on the worker\'s channel, at most one per 200 ms (sw/replica/replicas.ts `nudge()`): it reads the replica records, the outbox and the conflicts, never the whole bucket '
        + (st ? `(status() from the page: ${f1(st.empty)} ms with only the empty bucket's replica bound, ${f1(st.full)} ms more with the 1,000-object bucket's beside it). ` : '. ')
        + 'With the replica paused or idle that is all it adds; the announcements per PUT above show how many reads the timed PUTs met.', '',
      'With the replica live, a round runs beside the timed PUTs on the same worker thread and the same IndexedDB, whose one writer takes the round\'s writes in turn with the PUTs\'. The round gives way to them (sw/replica/foreground.ts: each of its steps waits until no request has been in flight for 25 ms, a second at most), so a live row that misses by as much as the paused rows vary in the same run is that noise; one that misses by much is a step of the round that did not wait.', ''];
    misses.push(out.join('\n'));
  }

  const b = r.burst;
  if (b) {
    const delayed = b.firstPushAfterMs > 5000;
    observations.push(`- Figure 13, a burst: 1,000 × 1 KiB PUTs, 8 in flight, into a bucket bound to a live replica took ${ms0(b.boundMs)} ms against ${ms0(b.unboundMs)} ms into an unbound one (one sample each). `
      + `They set off ${b.announced} status announcements (at most one per 200 ms); the last came ${(b.lastStatusAfterMs / 1000).toFixed(1)} s after the last write. `
      + `The round the writes set off (half a second after the last) pushed its first key ${(b.firstPushAfterMs / 1000).toFixed(1)} s and its last ${(b.lastPushAfterMs / 1000).toFixed(1)} s after the last write`
      + (delayed ? ': a round starts by announcing its state (`round()` awaits `announce()`), and a bucket\'s announcements run one after another, so it waited behind the writes\' announcements before pushing anything.' : '.')
      + ` ${b.pending === 0 ? 'Nothing was left pending.' : `${b.pending} keys were still pending once it was quiet.`}\n`);
  }
  const mp = rows.find((x) => x.figure === 13 && x.name.includes('(multipartBytes'));
  const plain = rows.find((x) => x.figure === 13 && x.name === 'replica push 10 × 16 MiB vs AWS SDK');
  if (mp && plain) {
    observations.push(`- Figure 13, 10 × 16 MiB pushed by multipart (multipartBytes 8 MiB) took ${ms0(mp.value)} ms against ${ms0(plain.value)} ms as plain PUTs in the same rounds: each object's 2 parts go one after another (sw/replica/sync.ts \`pushMultipart\`), between a Create and a HEAD and a Complete, and the upload's journal is written to the store after the Create and after each part (its replica record, so that a later round resumes it). `
      + `The SDK's PutObjects of the same 16 MiB Blobs from the page took ${ms0(plain.baseline)} ms${plain.ratio < 1 ? ', longer than the replica\'s plain PUTs from the worker (not taken apart here; figure 11 times the SDK\'s own work per call)' : ''}.\n`);
  }
  return { misses, observations, explained };
}
