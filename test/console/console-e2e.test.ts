import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createCatalogCache } from '../../src/catalog/catalog-cache.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The support console end to end: Debian's Chromium (headless, driven by playwright-core)
 * against a whole in-process gateway listening on 127.0.0.1. Screenshots go to the OS temp
 * directory, never into the repository.
 */
const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) console.warn(`support console e2e skipped: ${CHROMIUM} not found (apt-get install -y chromium)`);

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

describe.skipIf(!HAS_CHROMIUM)(HAS_CHROMIUM ? 'support console in Chromium' : `support console in Chromium (skipped: ${CHROMIUM} not found)`, () => {
  let gw: TestGateway;
  let app: App;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let supportKey: string;
  let storefront: string;
  let order: any;
  let attention: any;
  /** Console errors and CSP violations seen in the page; must stay empty. */
  const pageErrors: string[] = [];
  /** Screenshots for a person to look at: in the OS temp directory, never the repository. */
  const shot = (name: string) => page.screenshot({ path: path.join(tmpdir(), `support-console-${name}.png`), fullPage: true });

  beforeAll(async () => {
    gw = await startTestGateway();
    storefront = await gw.key();
    supportKey = await gw.ctx.key(['support:read', 'support:reveal', 'support:write'], 'agent-console');

    const placed = await gw.order(storefront, { cardId: '301', quantity: 2, reference: 'console-shop-1' });
    order = await gw.settled(storefront, placed.body.id);
    gw.sandbox.sandbox.control.setFaults({ failNext: { 'confirm-order': 1000 } });
    const stuck = await gw.order(storefront, { cardId: '201', quantity: 1, reference: 'console-shop-2' });
    attention = await gw.settled(storefront, stuck.body.id);
    gw.sandbox.sandbox.control.setFaults({ failNext: {} });

    // The test gateway's app is already started; build another on the same components with the console.
    const catalog = createCatalogCache({ prisma: gw.ctx.prisma, log: gw.ctx.log, staleAfterMs: gw.ctx.config.catalog.staleAfterMs });
    await catalog.reload();
    app = await gw.ctx.app({
      catalog,
      busy: gw.busy,
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    base = address.replace('localhost', '127.0.0.1');

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1366, height: 900 } });
    page = await context.newPage();
    // Script errors and CSP violations (console errors); failed API calls are part of the flow
    // (a wrong key, a refused resolve) and shown in the page, but a failed asset load is not.
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) pageErrors.push(msg.text());
    });
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('response', (res) => {
      if (res.status() >= 400 && !new URL(res.url()).pathname.startsWith('/v1/')) pageErrors.push(`${res.status()} ${res.url()}`);
    });
  }, 60_000);

  afterAll(async () => {
    if (page) await page.screenshot({ path: path.join(tmpdir(), 'support-console-last.png'), fullPage: true }).catch(() => undefined);
    await context?.close();
    await browser?.close();
    await gw?.close();
  });

  it('serves the page with its CSP and asks for a key', async () => {
    const res = await page.goto(`${base}/console`);
    expect(res?.status()).toBe(200);
    const headers = res!.headers();
    expect(headers['content-security-policy']).toBe(CSP);
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['cache-control']).toBe('no-store');
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).isVisible()).toBe(true);
    // The status strip reads /readyz without a key.
    await expect.poll(() => page.locator('#status-catalog').textContent()).toMatch(/Catalog synced/);
    await expect.poll(() => page.locator('#status-busy').textContent()).toBe('Provider: normal');
  });

  it('refuses a wrong key with a readable message', async () => {
    await page.getByLabel('Support API key').fill('gwk_notarealkey_0000000000000000000000000000000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/not valid or has been revoked/);
  });

  it('signs in with a support key kept in sessionStorage only', async () => {
    await page.getByLabel('Support API key').fill(supportKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#identity-name').textContent()).toMatch(/Signed in as agent-console/);
    const storage = await page.evaluate<{ session: number; local: number; url: string }>('({ session: sessionStorage.length, local: localStorage.length, url: location.href })');
    expect(storage.session).toBe(1);
    expect(storage.local).toBe(0);
    expect(storage.url).not.toContain(supportKey);
    // Queue health appears once a key may read it.
    await expect.poll(() => page.locator('#status-queues').textContent()).toMatch(/Orders in flight: \d+ · failed jobs: \d+/);
  });

  it('searches a transaction number and opens the order', async () => {
    await page.getByLabel('Transaction number, transaction id, reference or order id').fill(String(order.transactionNumber));
    await page.getByRole('button', { name: 'Search' }).click();
    const link = page.getByRole('link', { name: String(order.transactionNumber), exact: true });
    await link.waitFor();
    // The results may render more than once (the status strip refreshes after sign-in): poll.
    await expect.poll(() => page.locator('table.orders tbody tr').count()).toBe(1);
    await link.click();
    await page.getByRole('heading', { name: `Order ${order.transactionNumber}` }).waitFor();
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).toContain(order.transactionId);
    expect(text).toContain(`gw-${order.id}`);
    expect(text).toContain('0.20');
    // Arabic names right to left.
    const ar = page.locator('[dir="rtl"][lang="ar"]', { hasText: 'جوجل بلاي' });
    expect(await ar.count()).toBeGreaterThan(0);
    // The timeline lists the provider calls with their durations.
    const timeline = (await page.locator('table.timeline').textContent()) ?? '';
    for (const endpoint of ['getBalance', 'initiateCardRequest', 'confirmOrder']) expect(timeline).toContain(endpoint);
    expect(timeline).toMatch(/\d+ ms/);
    // Never the codes until revealed.
    for (const card of order.cards) expect(text).not.toContain(card.code);
  });

  it('reveals the codes after a confirmation with a reason, and shows the audit entry', async () => {
    await page.getByRole('button', { name: 'Reveal codes' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor();
    await shot('reveal-dialog');
    // The confirm button refuses an empty reason (required field): the dialog stays open.
    await dialog.getByRole('button', { name: 'Reveal codes' }).click();
    expect(await dialog.isVisible()).toBe(true);
    await dialog.getByLabel('Reason').fill('customer lost the email, ticket 42');
    await dialog.getByRole('button', { name: 'Reveal codes' }).click();
    await dialog.waitFor({ state: 'detached' }).catch(() => undefined);
    await page.locator('table.codes-table').waitFor();
    const codes = (await page.locator('table.codes-table').textContent()) ?? '';
    for (const card of order.cards) expect(codes).toContain(card.code);

    const audit = page.locator('table.audit');
    await expect.poll(async () => (await audit.textContent()) ?? '').toMatch(/reveal/);
    const row = (await audit.locator('tbody tr').first().textContent()) ?? '';
    expect(row).toContain('agent-console');
    expect(row).toContain('customer lost the email, ticket 42');
    await shot('order-revealed');
    expect(await page.evaluate('JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage })')).not.toContain(order.cards[0].code);
  });

  it('forgets the codes on leaving the order page, and lists the needs-attention queue', async () => {
    await page.getByRole('link', { name: 'Needs attention' }).click();
    await page.getByRole('heading', { name: /^Needs attention \(1\)$/ }).waitFor();
    const text = (await page.locator('main').textContent()) ?? '';
    for (const card of order.cards) expect(text).not.toContain(card.code);
    expect(text).toContain(String(attention.transactionNumber));
    expect(text).toContain(attention.statusDetail);
    await page.getByRole('link', { name: String(attention.transactionNumber), exact: true }).click();
    await page.getByRole('heading', { name: `Order ${attention.transactionNumber}` }).waitFor();
    expect(await page.getByRole('button', { name: 'Retry…' }).isEnabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Resolve…' }).isEnabled()).toBe(true);
    await shot('attention-order');
    // Going back restores nothing revealed.
    await page.goBack();
    await page.getByRole('heading', { name: /^Needs attention/ }).waitFor();
  });

  it('shows API refusals readably, and retries a needs_attention order through its dialog', async () => {
    await page.goto(`${base}/console#/order/${attention.id}`);
    await page.getByRole('heading', { name: `Order ${attention.transactionNumber}` }).waitFor();
    // Resolving as fulfilled without the codes: the API refuses (400) and the dialog says why.
    await page.getByRole('button', { name: 'Resolve…' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByLabel(/^Fulfilled/).check();
    await dialog.getByLabel('Note for the timeline').fill('provider console shows it paid');
    await dialog.getByRole('button', { name: 'Resolve order' }).click();
    await expect.poll(() => dialog.locator('#dialog-error').textContent()).toMatch(/needs 1 card\(s\): 0 stored, 0 entered/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' }).catch(() => undefined);
    expect(await page.locator('dialog[open]').count()).toBe(0);

    await page.getByRole('button', { name: 'Retry…' }).click();
    await dialog.getByLabel('Note for the timeline').fill('provider says the reservation is pending');
    await dialog.getByRole('button', { name: 'Retry order' }).click();
    await expect.poll(() => page.locator('main .badge').first().textContent(), { timeout: 10_000 }).toMatch(/Reserved|Confirming|Fulfilled/);
    await expect.poll(async () => (await page.locator('table.audit').textContent()) ?? '').toMatch(/retry/);
    expect((await gw.settled(storefront, attention.id)).status).toBe('fulfilled');
  });

  it('shows the sales report with a chart and downloads it as CSV', async () => {
    await page.getByRole('link', { name: 'Sales report' }).click();
    await page.getByLabel('Group by').selectOption('vendor');
    await page.getByRole('button', { name: 'Show report' }).click();
    const report = page.locator('table.report');
    await expect.poll(async () => (await report.textContent()) ?? '').toContain('Google Play');
    expect(await report.textContent()).toContain('0.20');
    expect(await page.locator('svg.chart rect.chart-bar').count()).toBeGreaterThan(0);
    await shot('sales-report');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^sales-vendor-.*\.csv$/);
    const file = path.join(tmpdir(), `console-e2e-${Date.now()}.csv`);
    await download.saveAs(file);
    const lines = readFileSync(file, 'utf8').trim().split('\r\n');
    expect(lines[0]).toBe('vendor,name_en,name_ar,orders,quantity,amount');
    expect(lines).toContain('V-1,Google Play,جوجل بلاي,1,2,0.20');
  });

  it('signs out, clearing the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate('sessionStorage.length + localStorage.length')).toBe(0);
    // No CSP violation or script error happened along the way.
    expect(pageErrors).toEqual([]);
    await shot('signed-out');
  });
});
