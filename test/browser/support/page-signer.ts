// The request signing the browser tests do inside the page, written from docs/protocol.md, "Signing",
// independently of the service and of the Node test signer (test/support/sign.ts). It reaches the page
// as source text (a Playwright init script, an evaluate() argument, an engine's tools), so it refers to
// nothing outside itself; each user rebuilds it there with
// `(new Function(`return (${PAGE_SIGNER})`)() as typeof pageSigner)()`.

/** Request options of PageSigner.fetchAsRoot. */
export interface RootFetchInit {
  headers?: Record<string, string>;
  body?: Blob | string | ReadableStream<Uint8Array>;
}

export interface PageSigner {
  /**
   * Sets Authorization on `headers` for `method` and `url` (resolved against the page's address),
   * signed with `creds`. `headers` must already hold everything the signature covers, X-Svc-Date among
   * them. The resource is worked out from the address as the service does: the bucket from a
   * virtual-host name (`{bucket}.svc.localhost`), else from the path, past the page-origin mount `/svc/`.
   */
  sign(method: string, url: string, headers: Headers, creds: { accessKeyId: string; secret: string }): Promise<void>;
  /**
   * fetch() signed as root, dated now. A string body goes out as a Blob without a type (a string would
   * get a Content-Type the signature did not cover); a ReadableStream body is streamed (duplex: 'half'),
   * so the page decides when each byte is sent.
   */
  fetchAsRoot(method: string, url: string, init?: RootFetchInit): Promise<Response>;
}

export function pageSigner(): PageSigner {
  async function sign(method: string, url: string, headers: Headers, creds: { accessKeyId: string; secret: string }): Promise<void> {
    const ENDPOINT = 'svc.localhost';
    const SIGNED = ['acl', 'versioning', 'versions', 'versionId', 'uploadId', 'uploads', 'partNumber', 'delete', 'account', 'accounts', 'export', 'import', 'bucket', 'conflict'];
    const enc = new TextEncoder();
    // A path that is not valid percent-encoding is signed as it stands, so the request still reaches the
    // service instead of the signer throwing.
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    };
    const encodeKey = (key: string) => Array.from(enc.encode(key), (b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9\-_.*]/.test(c) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
    }).join('');
    const u = new URL(url, location.href);
    let bucket: string;
    let key: string;
    if (u.hostname.endsWith('.' + ENDPOINT)) {
      bucket = u.hostname.slice(0, -ENDPOINT.length - 1);
      key = decode(u.pathname.slice(1));
    } else {
      let path = u.pathname;
      if (u.hostname !== ENDPOINT && (path === '/svc' || path.startsWith('/svc/'))) path = path.slice(4);
      const rest = path.replace(/^\//, '');
      const slash = rest.indexOf('/');
      bucket = decode(slash < 0 ? rest : rest.slice(0, slash));
      key = slash < 0 ? '' : decode(rest.slice(slash + 1));
    }
    let resource = bucket === '' ? '/' : `/${bucket}/${encodeKey(key)}`;
    const subs = [...new URLSearchParams(u.search)].filter(([n]) => SIGNED.includes(n))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([n, v]) => (v === '' ? n : `${n}=${v}`));
    if (subs.length) resource += '?' + subs.join('&');
    const names = [...headers.keys()].filter((n) => n.startsWith('x-svc-')).sort();
    const canonical = names.map((n) => `${n}:${headers.get(n)!.trim()}\n`).join('');
    const sts = `${method}\n${headers.get('content-md5') ?? ''}\n${headers.get('content-type') ?? ''}\n\n${canonical}${resource}`;
    const hmacKey = await crypto.subtle.importKey('raw', enc.encode(creds.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const sig = new Uint8Array(await crypto.subtle.sign('HMAC', hmacKey, enc.encode(sts)));
    headers.set('authorization', `SVC ${creds.accessKeyId}:${btoa(String.fromCharCode(...sig))}`);
  }
  return {
    sign,
    async fetchAsRoot(method, url, init = {}) {
      const h = new Headers(init.headers ?? {});
      h.set('x-svc-date', new Date().toUTCString());
      await sign(method, url, h, { accessKeyId: 'svcadmin', secret: 'svcadmin-secret' });
      const body = typeof init.body === 'string' ? new Blob([init.body]) : init.body;
      const streamed = body instanceof ReadableStream ? { duplex: 'half' } : {};
      return fetch(url, { method, headers: h, ...(body !== undefined ? { body } : {}), ...streamed } as RequestInit);
    },
  };
}

export const PAGE_SIGNER = pageSigner.toString();
