// The attack: keys and listing parameters holding characters XML 1.0 cannot carry, so that a
// listing or an error body stops being well-formed, and a CR that comes back as LF. What must hold:
// 400 InvalidArgument for the characters, nothing stored, every XML body well-formed, and a key
// with a CR round-tripping byte for byte.
import { describe, it, expect, beforeEach } from 'vitest';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { newService, send } from '../support/service.ts';
import { createClient } from '../../src/client/index.ts';
import { ROOT } from '../support/sign.ts';

const HOST = 'http://xmlchars.svc.localhost';
let svc: Awaited<ReturnType<typeof newService>>;

/** Anything XML 1.0 forbids in a document, even as a reference (its Char production). */
const NOT_XML = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

function wellFormed(text: string): void {
  expect(NOT_XML.test(text), `a character XML cannot carry in ${JSON.stringify(text)}`).toBe(false);
  expect(XMLValidator.validate(text), text).toBe(true);
}

beforeEach(async () => {
  svc = await newService();
  expect((await send(svc.handle, 'PUT', HOST + '/')).status).toBe(200);
});

describe('keys that XML cannot carry', () => {
  const refused: [string, string][] = [
    ['NUL', '%00'], ['U+0001', '%01'], ['U+0008', 'a%08b'], ['vertical tab', 'a%0Bb'], ['form feed', 'a%0Cb'],
    ['U+001F', 'x%1F'], ['U+FFFE', 'a%EF%BF%BEb'], ['U+FFFF', '%EF%BF%BF'], ['invalid UTF-8', 'a%C3%28'],
    ['an encoded lone surrogate', '%ED%A0%80'],
  ];
  for (const [what, raw] of refused) {
    it(`${what}: PUT ${raw} → 400 InvalidArgument, well-formed, and nothing stored`, async () => {
      // Signed where a key can be signed at all; invalid UTF-8 has no signable form, and the
      // address is refused before the signature is looked at.
      const signable = !/invalid UTF-8|surrogate/.test(what);
      const put = await send(svc.handle, 'PUT', `${HOST}/${raw}`, { body: 'x', ...(signable ? {} : { auth: 'anon' as const }) });
      expect(put.status).toBe(400);
      expect(put.text).toContain('<Code>InvalidArgument</Code>');
      wellFormed(put.text);
      const list = await send(svc.handle, 'GET', HOST + '/');
      wellFormed(list.text);
      expect(list.text).not.toContain('<Contents>');
    });
  }

  it('a copy source that XML cannot carry gets a well-formed error', async () => {
    const res = await send(svc.handle, 'PUT', `${HOST}/dest`, { headers: { 'x-svc-copy-source': '/xmlchars/a%01b' } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    wellFormed(res.text);
  });
});

describe('listing parameters that XML cannot carry', () => {
  for (const name of ['prefix', 'marker', 'delimiter']) {
    for (const raw of ['%01', 'a%0Bb', '%EF%BF%BF', '%C3%28']) {
      it(`GET /?${name}=${raw} → 400 InvalidArgument, well-formed`, async () => {
        const res = await send(svc.handle, 'GET', `${HOST}/?${name}=${raw}`);
        expect(res.status).toBe(400);
        expect(res.text).toContain('<Code>InvalidArgument</Code>');
        expect(res.text).toContain(name);
        wellFormed(res.text);
      });
    }
  }
  it('List Multipart Uploads: key-marker and prefix too', async () => {
    for (const q of ['uploads&key-marker=%01', 'uploads&prefix=%1F']) {
      const res = await send(svc.handle, 'GET', `${HOST}/?${q}`);
      expect(res.status, q).toBe(400);
      wellFormed(res.text);
    }
  });
  it('ordinary characters in the parameters are echoed, escaped, in a well-formed listing', async () => {
    const res = await send(svc.handle, 'GET', `${HOST}/?prefix=${encodeURIComponent('a<&>"\'b')}&delimiter=%2F&marker=${encodeURIComponent('tab\there')}`);
    expect(res.status).toBe(200);
    wellFormed(res.text);
    const doc = new XMLParser({ processEntities: true, htmlEntities: true, parseTagValue: false, trimValues: false }).parse(res.text);
    expect(doc.ListBucketResult.Prefix).toBe('a<&>"\'b');
    expect(doc.ListBucketResult.Marker).toBe('tab\there');
  });
});

describe('a key with a CR', () => {
  it('is written &#13; in listings and round-trips byte for byte: put, list, get, delete multiple', async () => {
    // The browser's mode, so that the client can talk to the handler directly.
    svc = await newService({ contentLength: 'body' });
    expect((await send(svc.handle, 'PUT', HOST + '/')).status).toBe(200);
    const key = 'line\r\nbreak\rend';
    expect((await send(svc.handle, 'PUT', `${HOST}/${encodeURIComponent(key)}`, { body: 'cr' })).status).toBe(200);
    const list = await send(svc.handle, 'GET', HOST + '/');
    wellFormed(list.text);
    expect(list.text).toContain('<Key>line&#13;\nbreak&#13;end</Key>');
    // A conforming XML parser reads it back as it was stored.
    const doc = new XMLParser({ processEntities: true, htmlEntities: true, parseTagValue: false, trimValues: false }).parse(list.text);
    expect(doc.ListBucketResult.Contents.Key).toBe(key);
    expect((await send(svc.handle, 'GET', `${HOST}/${encodeURIComponent(key)}`)).text).toBe('cr');

    // The typed client, end to end: it lists the key exactly and deletes it by Delete Multiple.
    const s3 = createClient({
      endpoint: 'http://svc.localhost', accessKeyId: ROOT.accessKeyId, secretAccessKey: ROOT.secret, fetch: (input, init) => svc.handle(new Request(input, init)),
    });
    expect((await s3.listObjects('xmlchars')).objects.map((o) => o.key)).toEqual([key]);
    const deleted = await s3.deleteObjects('xmlchars', [key]);
    expect(deleted).toEqual({ deleted: [{ key }], errors: [] });
    expect((await s3.listObjects('xmlchars')).objects).toEqual([]);
  });
});
