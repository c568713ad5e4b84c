// A DevTools session on swbucket's service worker. Playwright gives CDP sessions for pages only, so
// this goes through the browser session: Target.attachToTarget on the worker's target, then
// messages relayed with Target.sendMessageToTarget (the non-flattened protocol).
import type { BrowserContext, CDPSession } from 'playwright-core';

/** What the session needs of a benchmark's (or a test's) environment. */
interface Site {
  context: BrowserContext;
  /** The origin whose /sw.js is the worker. */
  site: { url: string };
}

export interface WorkerSession {
  send<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

export async function attachToServiceWorker(env: Site): Promise<WorkerSession> {
  const browser = env.context.browser();
  if (!browser) throw new Error('no Browser behind the context: cannot open a browser CDP session');
  const cdp: CDPSession = await browser.newBrowserCDPSession();
  const { targetInfos } = await cdp.send('Target.getTargets');
  const target = targetInfos.find((t) => t.type === 'service_worker' && t.url.startsWith(`${env.site.url}/sw.js`));
  if (!target) throw new Error(`no service worker target for ${env.site.url}/sw.js among ${targetInfos.map((t) => `${t.type} ${t.url}`).join(', ')}`);
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: target.targetId, flatten: false });

  let nextId = 0;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  cdp.on('Target.receivedMessageFromTarget', (event) => {
    if (event.sessionId !== sessionId) return;
    const msg = JSON.parse(event.message) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = msg.id === undefined ? undefined : pending.get(msg.id);
    if (!waiter) return;
    pending.delete(msg.id!);
    if (msg.error) waiter.reject(new Error(msg.error.message));
    else waiter.resolve(msg.result);
  });
  return {
    send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
      const id = ++nextId;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
      });
    },
    async close() {
      await cdp.send('Target.detachFromTarget', { sessionId }).catch(() => {});
      await cdp.detach().catch(() => {});
    },
  };
}
