// The console in the project's engine: it starts, lists what is stored, and its Settings view says
// what this engine lacks (service.storage.limits, found out as the service started), in every
// engine the same way.
import { describe, it, expect } from 'vitest';
import { useServicePage } from './support/fixture.ts';

const service = useServicePage();
const { name } = service;

type Sw = { client: { createBucket(b: string): Promise<unknown> }; storage: { bodies: string | null; limits: string[] } };

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
