// The third adversarial pass (issue 37), across accounts: what one account's signature, or its
// upload ids, could be made to do or tell beyond what it was given for. Through the handler over
// every store kind; SVC's and NOS's signatures from test/support/sign.ts (node:crypto), S3's from
// the AWS SDK's signer.
import { describe, expect, it } from 'vitest';
import { newService, send, type SendOptions } from '../support/service.ts';
import { STORE_KINDS, type StoreKind } from '../support/stores.ts';
import { presign } from '../support/sign.ts';
import { s3 } from '../support/s3-sign.ts';

const BOB = { accessKeyId: 'bob-key', secret: 'bob-secret-123' };
const ALICE = { accessKeyId: 'alice-key', secret: 'alice-secret-123' };
const exp = () => Math.floor(Date.now() / 1000) + 300;
const codeOf = (text: string) => /<Code>([^<]*)<\/Code>/.exec(text)?.[1];

async function service(kind: StoreKind) {
  const svc = await newService({ kind });
  const call = (method: string, url: string, o: SendOptions = {}) => send(svc.handle, method, url, o);
  for (const who of [BOB, ALICE]) {
    const r = await call('PUT', `http://svc.localhost/?account=${who.accessKeyId}`, {
      body: `<Account><SecretAccessKey>${who.secret}</SecretAccessKey><DisplayName>${who.accessKeyId}</DisplayName></Account>`,
    });
    expect(r.status, r.text).toBe(200);
  }
  return { ...svc, call };
}

describe.each(STORE_KINDS)('across accounts (%s)', (kind) => {
  it('SVC and NOS: a link signed for one Upload Part is not a PUT when its parameters are re-encoded (?partNumber=1%26uploadId%3DU): 403, the object kept', async () => {
    const s = await service(kind);
    const B = 'http://svc.localhost/bob-docs';
    expect((await s.call('PUT', B, { auth: BOB })).status).toBe(200);
    expect((await s.call('PUT', `${B}/doc.txt`, { auth: BOB, body: 'ORIGINAL' })).status).toBe(200);
    const started = await s.call('POST', `${B}/doc.txt?uploads`, { auth: BOB });
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(started.text)![1]!;
    const link = presign('PUT', `${B}/doc.txt?partNumber=1&uploadId=${uploadId}`, exp(), BOB);
    // NOS's StringToSign is SVC's with its own header prefix, and a presigned one has no headers:
    // the same link with NOS's parameter name is NOS's own.
    for (const signed of [link, link.replace('SVCAccessKeyId=', 'NOSAccessKeyId=')]) {
      const forged = signed.replace(`partNumber=1&uploadId=${uploadId}`, `partNumber=1%26uploadId%3D${uploadId}`);
      expect(forged).not.toBe(signed);
      const r = await send(s.handle, 'PUT', forged, { auth: 'anon', body: 'REPLACED' });
      expect([r.status, codeOf(r.text)], forged).toEqual([403, 'AccessDenied']);
      // A second uploadId added is a resource the link did not sign.
      const twice = signed.replace(`uploadId=${uploadId}`, `uploadId=${uploadId}&uploadId=${uploadId}`);
      const again = await send(s.handle, 'PUT', twice, { auth: 'anon', body: 'REPLACED' });
      expect([again.status, codeOf(again.text)], twice).toEqual([403, 'AccessDenied']);
    }
    expect((await s.call('GET', `${B}/doc.txt`, { auth: BOB })).text).toBe('ORIGINAL');
    // The link as signed uploads its part.
    expect((await send(s.handle, 'PUT', link, { auth: 'anon', body: 'a part' })).status).toBe(200);
  });

  it('an upload id of another owner\'s bucket is NoSuchUpload, as one that does not exist (no oracle); in SVC one of the caller\'s own other key stays 400', async () => {
    const s = await service(kind);
    expect((await s.call('PUT', 'http://svc.localhost/bob-up', { auth: BOB })).status).toBe(200);
    expect((await s.call('PUT', 'http://svc.localhost/alice-up', { auth: ALICE })).status).toBe(200);
    const started = await s.call('POST', 'http://svc.localhost/bob-up/x?uploads', { auth: BOB });
    const bobs = /<UploadId>([^<]+)<\/UploadId>/.exec(started.text)![1]!;
    const own = /<UploadId>([^<]+)<\/UploadId>/.exec((await s.call('POST', 'http://svc.localhost/alice-up/y?uploads', { auth: ALICE })).text)![1]!;
    const A = 'http://svc.localhost/alice-up/x';
    for (const [method, url, body] of [
      ['PUT', `${A}?partNumber=1&uploadId=${bobs}`, 'part'], ['GET', `${A}?uploadId=${bobs}`, undefined],
      ['DELETE', `${A}?uploadId=${bobs}`, undefined], ['POST', `${A}?uploadId=${bobs}`, '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>'],
    ] as const) {
      const r = await s.call(method, url, { auth: ALICE, ...(body !== undefined ? { body } : {}) });
      expect([r.status, codeOf(r.text)], `${method} ${url}`).toEqual([404, 'NoSuchUpload']);
    }
    const mine = await s.call('PUT', `${A}?partNumber=1&uploadId=${own}`, { auth: ALICE, body: 'part' });
    expect([mine.status, codeOf(mine.text)]).toEqual([400, 'InvalidArgument']);
    // S3 answers NoSuchUpload for any upload not of the key named, the caller's own included.
    const aliceS3 = { accessKeyId: ALICE.accessKeyId, secretAccessKey: ALICE.secret };
    for (const id of [bobs, own]) {
      const r = await s.handle(await s3('PUT', `http://alice-up.s3.localhost/x?partNumber=1&uploadId=${id}`, new TextEncoder().encode('part'), { creds: aliceS3 }));
      expect([r.status, codeOf(await r.text())]).toEqual([404, 'NoSuchUpload']);
    }
    // Bob's upload is untouched.
    const parts = await s.call('GET', `http://svc.localhost/bob-up/x?uploadId=${bobs}`, { auth: BOB });
    expect([parts.status, parts.text.includes('<Part>')]).toEqual([200, false]);
  });
});
