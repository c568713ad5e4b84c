// The AWS SDK for JavaScript v3, unmodified, bundled into a page as an app's bundler would bundle it,
// against the built worker in this engine: `endpoint: 'http://s3.localhost'` (virtual-host
// buckets, `{bucket}.s3.localhost`), answered from the page's IndexedDB. Strings with the SDK's
// default checksums, Blob and File bodies (which the SDK can send only with checksums
// WHEN_REQUIRED in a browser: aws-sdk-js-v3 #6834), lib-storage's multipart Upload with progress,
// a presigned URL in an <img>, a form posted with createPresignedPost's fields, and an object
// shared with the service's own dialect.
import { describe, it, expect, beforeAll } from 'vitest';
import { build } from 'esbuild';
import { useServicePage } from './support/fixture.ts';

const service = useServicePage();

/** The SDK as a classic script that sets `globalThis.__s3`. */
let sdkScript = '';
beforeAll(async () => {
  const out = await build({
    stdin: {
      contents: [
        "import * as s3 from '@aws-sdk/client-s3';",
        "import { Upload } from '@aws-sdk/lib-storage';",
        "import { getSignedUrl } from '@aws-sdk/s3-request-presigner';",
        "import { createPresignedPost } from '@aws-sdk/s3-presigned-post';",
        '(globalThis as any).__s3 = { ...s3, Upload, getSignedUrl, createPresignedPost };',
      ].join('\n'),
      resolveDir: process.cwd(),
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  });
  sdkScript = out.outputFiles[0]!.text;
}, 60_000);

/** A 2×1 PNG, for the <img>. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP4z8DwHwQZGBgAIfsD/VxfvZ8AAAAASUVORK5CYII=';

describe(`the AWS SDK v3 in a page, through the worker (${service.name})`, () => {
  it('creates a bucket, puts and reads strings, Blobs and Files, lists, copies, deletes and writes conditionally', async () => {
    const got = await service.page.evaluate(async ({ script, bucket }: { script: string; bucket: string }) => {
      (0, eval)(script);
      const S3 = (globalThis as any).__s3; // eslint-disable-line @typescript-eslint/no-explicit-any
      const credentials = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };
      const s3 = new S3.S3Client({ endpoint: 'http://s3.localhost', region: 'us-east-1', credentials });
      // A Blob or File body needs checksums only when required, in a browser (aws-sdk-js-v3 #6834).
      const files = new S3.S3Client({ endpoint: 'http://s3.localhost', region: 'us-east-1', credentials, requestChecksumCalculation: 'WHEN_REQUIRED' });
      await s3.send(new S3.CreateBucketCommand({ Bucket: bucket }));
      const put = await s3.send(new S3.PutObjectCommand({ Bucket: bucket, Key: 'notes/a.txt', Body: 'from the page', ContentType: 'text/plain', Metadata: { app: 'demo' } }));
      const blob = new Blob([new Uint8Array(100_000).map((_, i) => i % 251)], { type: 'application/x-blob' });
      await files.send(new S3.PutObjectCommand({ Bucket: bucket, Key: 'blob.bin', Body: blob, ContentType: blob.type }));
      const file = new File(['a file body'], 'f.txt', { type: 'text/plain' });
      await files.send(new S3.PutObjectCommand({ Bucket: bucket, Key: 'notes/f.txt', Body: file, ContentType: file.type }));
      const a = await s3.send(new S3.GetObjectCommand({ Bucket: bucket, Key: 'notes/a.txt' }));
      const b = await s3.send(new S3.GetObjectCommand({ Bucket: bucket, Key: 'blob.bin' }));
      const bBytes = await b.Body.transformToByteArray();
      const listed = await s3.send(new S3.ListObjectsV2Command({ Bucket: bucket, Prefix: 'notes/' }));
      await s3.send(new S3.CopyObjectCommand({ Bucket: bucket, Key: 'copy.txt', CopySource: `${bucket}/notes/a.txt` }));
      const copy = await s3.send(new S3.HeadObjectCommand({ Bucket: bucket, Key: 'copy.txt' }));
      const deleted = await s3.send(new S3.DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'copy.txt' }, { Key: 'notes/f.txt' }] } }));
      const failure = (p: Promise<unknown>) => p.then(() => 'none', (e: Error) => e.name);
      const missing = await failure(s3.send(new S3.GetObjectCommand({ Bucket: bucket, Key: 'copy.txt' })));
      // A conditional write: create only where the key holds nothing.
      const taken = await failure(s3.send(new S3.PutObjectCommand({ Bucket: bucket, Key: 'notes/a.txt', Body: 'overwritten', IfNoneMatch: '*' })));
      // The same object through the service's own dialect: the page-origin mount, signed by nobody (the bucket is private).
      const svc = await fetch(`http://${bucket}.svc.localhost/notes/a.txt`);
      return {
        etag: put.ETag, text: await a.Body.transformToString(), type: a.ContentType, meta: a.Metadata,
        blobSize: bBytes.length, blobOk: bBytes.every((x: number, i: number) => x === i % 251), blobType: b.ContentType,
        keys: listed.Contents.map((c: { Key: string }) => c.Key), copyType: copy.ContentType,
        deleted: deleted.Deleted.map((d: { Key: string }) => d.Key).sort(), missing, svcStatus: svc.status,
        taken, kept: await (await s3.send(new S3.GetObjectCommand({ Bucket: bucket, Key: 'notes/a.txt' }))).Body.transformToString(),
      };
    }, { script: sdkScript, bucket: `sdk-page-${Date.now()}` });
    expect(got).toEqual({
      etag: '"090310bd6c909c200c555326e2e25bf4"', text: 'from the page', type: 'text/plain', meta: { app: 'demo' },
      blobSize: 100_000, blobOk: true, blobType: 'application/x-blob',
      keys: ['notes/a.txt', 'notes/f.txt'], copyType: 'text/plain',
      deleted: ['copy.txt', 'notes/f.txt'], missing: 'NoSuchKey', svcStatus: 403,
      taken: 'PreconditionFailed', kept: 'from the page',
    });
  });

  it('uploads a Blob with lib-storage (multipart, progress), and shows a presigned URL in an <img>', async () => {
    const got = await service.page.evaluate(async ({ script, bucket, png }: { script: string; bucket: string; png: string }) => {
      (0, eval)(script);
      const S3 = (globalThis as any).__s3; // eslint-disable-line @typescript-eslint/no-explicit-any
      const s3 = new S3.S3Client({
        endpoint: 'http://s3.localhost', region: 'us-east-1', requestChecksumCalculation: 'WHEN_REQUIRED',
        credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' },
      });
      await s3.send(new S3.CreateBucketCommand({ Bucket: bucket }));
      const body = new Blob([new Uint8Array(11 * 1024 * 1024).map((_, i) => (i * 7) % 256)]);
      const progress: number[] = [];
      const upload = new S3.Upload({ client: s3, params: { Bucket: bucket, Key: 'big.bin', Body: body }, partSize: 5 * 1024 * 1024, queueSize: 2 });
      upload.on('httpUploadProgress', (p: { loaded: number }) => progress.push(p.loaded));
      const done = await upload.done();
      const head = await s3.send(new S3.HeadObjectCommand({ Bucket: bucket, Key: 'big.bin' }));
      const image = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
      await s3.send(new S3.PutObjectCommand({ Bucket: bucket, Key: 'dot.png', Body: image, ContentType: 'image/png' }));
      const url: string = await S3.getSignedUrl(s3, new S3.GetObjectCommand({ Bucket: bucket, Key: 'dot.png' }), { expiresIn: 300 });
      const img = document.createElement('img');
      const loaded = new Promise<string>((resolve) => {
        img.onload = () => resolve(`${img.naturalWidth}x${img.naturalHeight}`);
        img.onerror = () => resolve('error');
      });
      img.src = url;
      document.body.append(img);
      const size = await loaded;
      img.remove();
      return { etag: done.ETag, length: head.ContentLength, last: progress.at(-1), size, presigned: url.includes('X-Amz-Signature=') };
    }, { script: sdkScript, bucket: `sdk-up-${Date.now()}`, png: PNG });
    expect(got).toEqual({ etag: expect.stringMatching(/^"[0-9a-f]{32}-3"$/), length: 11 * 1024 * 1024, last: 11 * 1024 * 1024, size: '2x1', presigned: true });
  });

  it('posts an HTML form with createPresignedPost\'s fields and a chosen file', async () => {
    const got = await service.page.evaluate(async ({ script, bucket }: { script: string; bucket: string }) => {
      (0, eval)(script);
      const S3 = (globalThis as any).__s3; // eslint-disable-line @typescript-eslint/no-explicit-any
      const s3 = new S3.S3Client({ endpoint: 'http://s3.localhost', region: 'us-east-1', credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } });
      await s3.send(new S3.CreateBucketCommand({ Bucket: bucket }));
      const { url, fields } = await S3.createPresignedPost(s3, {
        Bucket: bucket, Key: 'avatars/${filename}', Expires: 60, Conditions: [['content-length-range', 1, 10_000]],
      });
      // The form as an app writes it: hidden inputs for the fields, a file input the user filled.
      const form = document.createElement('form');
      for (const [name, value] of Object.entries(fields as Record<string, string>)) {
        const input = document.createElement('input');
        Object.assign(input, { type: 'hidden', name, value });
        form.append(input);
      }
      const picker = document.createElement('input');
      Object.assign(picker, { type: 'file', name: 'file' });
      const chosen = new DataTransfer();
      chosen.items.add(new File(['a picture, say'], 'me.txt', { type: 'text/plain' }));
      picker.files = chosen.files;
      form.append(picker);
      const res = await fetch(url, { method: 'POST', body: new FormData(form) });
      const o = await s3.send(new S3.GetObjectCommand({ Bucket: bucket, Key: 'avatars/me.txt' }));
      return { status: res.status, etag: res.headers.get('etag'), text: await o.Body.transformToString(), url };
    }, { script: sdkScript, bucket: `sdk-form-${Date.now()}` });
    expect(got).toEqual({ status: 204, etag: expect.stringMatching(/^"[0-9a-f]{32}"$/), text: 'a picture, say', url: expect.stringMatching(/^http:\/\/sdk-form-\d+\.s3\.localhost\/?$/) });
  });

  it('refuses what a link was not signed for (an x-amz-copy-source added to an upload link) and form keys no other request could name', async () => {
    const got = await service.page.evaluate(async ({ script, bucket }: { script: string; bucket: string }) => {
      (0, eval)(script);
      const S3 = (globalThis as any).__s3; // eslint-disable-line @typescript-eslint/no-explicit-any
      const s3 = new S3.S3Client({ endpoint: 'http://s3.localhost', region: 'us-east-1', credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } });
      await s3.send(new S3.CreateBucketCommand({ Bucket: bucket }));
      await s3.send(new S3.PutObjectCommand({ Bucket: bucket, Key: 'private/secret.txt', Body: 'TOP-SECRET' }));
      const link: string = await S3.getSignedUrl(s3, new S3.PutObjectCommand({ Bucket: bucket, Key: 'avatar.png' }), { expiresIn: 300 });
      const copied = await fetch(link, { method: 'PUT', headers: { 'x-amz-copy-source': `/${bucket}/private/secret.txt` }, body: '' });
      const copiedText = await copied.text();
      const exists = () => s3.send(new S3.HeadObjectCommand({ Bucket: bucket, Key: 'avatar.png' })).then(() => true, () => false);
      const afterCopy = await exists();
      const upload = await fetch(link, { method: 'PUT', body: 'an avatar' });
      // Forms: a file name holding U+0001 for ${filename}; an empty key; a file over the policy's range.
      const post = async (key: string, name: string, body: string) => {
        const { url, fields } = await S3.createPresignedPost(s3, { Bucket: bucket, Key: key, Expires: 60, Conditions: [['content-length-range', 0, 100]] });
        const form = new FormData();
        for (const [k, v] of Object.entries(fields as Record<string, string>)) form.append(k, v);
        form.append('file', new File([body], name));
        const res = await fetch(url, { method: 'POST', body: form });
        return `${res.status} ${/<Code>([^<]*)/.exec(await res.text())?.[1] ?? ''}`;
      };
      const forms = [await post('up/${filename}', 'a\u0001b.txt', 'x'), await post('', 'n.txt', 'x'), await post('up/big', 'big.txt', 'y'.repeat(101))];
      const listed = await s3.send(new S3.ListObjectsV2Command({ Bucket: bucket }));
      return {
        copied: copied.status, copiedCode: /<Code>([^<]*)/.exec(copiedText)?.[1], afterCopy, upload: upload.status, forms,
        keys: (listed.Contents ?? []).map((c: { Key: string }) => c.Key),
      };
    }, { script: sdkScript, bucket: `sdk-attack-${Date.now()}` });
    expect(got).toEqual({
      copied: 403, copiedCode: 'AccessDenied', afterCopy: false, upload: 200,
      forms: ['400 InvalidArgument', '400 InvalidArgument', '400 EntityTooLarge'], keys: ['avatar.png', 'private/secret.txt'],
    });
  });

  it('enforces a bucket\'s CORS rules on the page\'s own requests, as S3 would on the deployed app', async () => {
    const got = await service.page.evaluate(async ({ script, bucket }: { script: string; bucket: string }) => {
      (0, eval)(script);
      const S3 = (globalThis as any).__s3; // eslint-disable-line @typescript-eslint/no-explicit-any
      const s3 = new S3.S3Client({ endpoint: 'http://s3.localhost', region: 'us-east-1', credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } });
      await s3.send(new S3.CreateBucketCommand({ Bucket: bucket }));
      await s3.send(new S3.PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'guarded' }));
      const read = async () => {
        try {
          return await (await s3.send(new S3.GetObjectCommand({ Bucket: bucket, Key: 'k' }))).Body.transformToString();
        } catch (e) {
          return `refused: ${(e as Error).name}`;
        }
      };
      const before = await read();
      // Rules that name this page's origin: answered as before.
      await s3.send(new S3.PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: [location.origin], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['*'] }] } }));
      const own = await read();
      // Rules for another origin only: the browser keeps the answers from this page.
      await s3.send(new S3.PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['https://prod.example'], AllowedMethods: ['GET', 'PUT', 'DELETE'], AllowedHeaders: ['*'] }] } }));
      const other = await read();
      // SVC's answers (the console's) are not under S3's rules.
      const svc = await fetch(`http://${bucket}.svc.localhost/k`);
      return { before, own, other, svcStatus: svc.status };
    }, { script: sdkScript, bucket: `sdk-cors-${Date.now()}` });
    expect(got).toEqual({ before: 'guarded', own: 'guarded', other: expect.stringMatching(/^refused: /), svcStatus: 403 });
  });
});
