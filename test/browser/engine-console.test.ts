// The console in the project's engine: it starts, lists what is stored, shows images as thumbnails
// and packs several objects into one tar download, and its Settings view says what this engine
// lacks (service.storage.limits, found out as the service started), in every engine the same way.
import { describe, it, expect } from 'vitest';
import { unpackTar } from 'modern-tar';
import { useServicePage } from './support/fixture.ts';
import { makePng } from './support/media.ts';

const service = useServicePage();
const { name } = service;

type Sw = {
  client: { createBucket(b: string): Promise<unknown>; putObject(b: string, k: string, body: Uint8Array | string): Promise<unknown> };
  storage: { bodies: string | null; limits: string[] };
};

describe(`the console in ${name}`, () => {
  it('starts, and lists a bucket the page created', async () => {
    await service.page.evaluate(async () => {
      await (window as unknown as { swbucket: Sw }).swbucket.client.createBucket('console-sees');
      location.hash = '#/';
    });
    await service.page.reload();
    await service.page.waitForFunction(() => document.body.innerText.includes('console-sees'), undefined, { timeout: 20_000 });
    expect(await service.page.evaluate(() => document.body.innerText)).toMatch(/Running/);
  });

  it('shows a grid with the thumbnail of an image, and downloads two objects as one tar', async () => {
    const png = makePng(4, 3, (x, y) => [x * 60, y * 80, 200]);
    const big = new Uint8Array(70_000).map((_, i) => (i * 31) & 255); // over the 16 KiB kept inline: a stored body (a Blob, or pieces in WebKit)
    await service.page.evaluate(async ({ png, big }) => {
      const { client } = (window as unknown as { swbucket: Sw }).swbucket;
      await client.createBucket('grid');
      await client.putObject('grid', 'tile.png', Uint8Array.from(png));
      await client.putObject('grid', 'big.bin', Uint8Array.from(big));
      localStorage.setItem('swbucket-console-layout', 'grid');
      location.hash = '#/b/grid/';
    }, { png: [...png], big: [...big] });
    await service.page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('[data-testid=object-tile][data-key="tile.png"] img');
      return img !== null && img.complete && img.naturalWidth > 0;
    }, undefined, { timeout: 20_000 });
    expect(await service.page.evaluate(() => {
      const img = document.querySelector<HTMLImageElement>('[data-testid=object-tile][data-key="tile.png"] img')!;
      return [img.naturalWidth, img.naturalHeight];
    })).toEqual([4, 3]);

    // The saved file is caught where the page hands it to the browser: the link it clicks.
    const saved = await service.page.evaluate(async () => {
      const caught = new Promise<{ name: string; bytes: number[] }>((resolve) => {
        const click = HTMLAnchorElement.prototype.click;
        HTMLAnchorElement.prototype.click = function (this: HTMLAnchorElement) {
          HTMLAnchorElement.prototype.click = click;
          void fetch(this.href).then((r) => r.arrayBuffer()).then((b) => resolve({ name: this.download, bytes: [...new Uint8Array(b)] }));
        };
      });
      document.querySelector<HTMLInputElement>('[data-testid=select-all]')!.click();
      const button = document.querySelector<HTMLButtonElement>('[data-testid=download-selected]')!;
      while (button.disabled) await new Promise((r) => setTimeout(r, 20)); // until the view shows the selection
      button.click();
      return caught;
    });
    expect(saved.name).toBe('grid.tar');
    const entries = await unpackTar(Uint8Array.from(saved.bytes));
    expect(entries.map((e) => e.header.name)).toEqual(['big.bin', 'tile.png']);
    expect(Buffer.from(entries[0]!.data!).equals(Buffer.from(big))).toBe(true);
    expect(Buffer.from(entries[1]!.data!).equals(Buffer.from(png))).toBe(true);
    await service.page.evaluate(() => localStorage.removeItem('swbucket-console-layout'));
  });

  it('Settings shows how objects are kept and every limit service.storage names', async () => {
    await service.page.evaluate(() => {
      location.hash = '#/settings';
    });
    await service.page.waitForFunction(() => document.querySelector('[data-testid="settings-bodies"]') !== null);
    const seen = await service.page.evaluate(() => {
      const storage = (window as unknown as { swbucket: Sw }).swbucket.storage;
      const panel = document.querySelector('[data-testid="settings-engine-limits"]');
      return {
        storage,
        bodies: document.querySelector('[data-testid="settings-bodies"]')!.textContent!.trim(),
        limits: panel ? [...panel.querySelectorAll('li')].map((li) => li.textContent!.trim()) : null,
      };
    });
    expect(seen.storage.bodies, 'the worker said how it keeps bodies').not.toBeNull();
    expect(seen.bodies).toMatch(seen.storage.bodies === 'pieces' ? /^as pieces/ : /^as Blobs/);
    // Chromium lacks nothing of what is asked: no panel. The others list exactly what the service found.
    if (seen.storage.limits.length === 0) expect(seen.limits).toBeNull();
    else expect(seen.limits).toEqual(seen.storage.limits);
    if (name !== 'chromium') expect(seen.storage.limits.length).toBeGreaterThan(0);
    if (name === 'webkit') expect(seen.limits!.join(' ')).toMatch(/keeps no Blobs/);
  });
});
