// The domain page says why a record did not verify: the `problem` text POST
// /admin/v1/domains/{id}/verify returns (the API and the CLI say it too), under the record's status,
// and it goes once the records check out. The relay asks a DNS server in this process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, newPage, screenshot, signIn, type TestBrowser } from '../helpers/browser.js';
import { publishRecords, startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

describe('the domain page shows each record\'s problem', () => {
  let dns: TestDnsServer;
  let t: TestRelay;
  let b: TestBrowser;
  before(async () => {
    dns = await startDnsServer();
    [t, b] = await Promise.all([
      // The periodic recheck stays off: the test decides when a check happens.
      startTestRelay({ flags: { dnsServer: [dns.address] }, overrides: (config) => void (config.dns.recheckIntervalSeconds = 0) }),
      launchBrowser(),
    ]);
  });
  after(async () => {
    await b?.close();
    await t?.stop();
    await dns?.close();
  });

  it('after Verify now, a failed record shows the value found instead, and a verified one shows none', async () => {
    const created = await t.admin('POST', `/admin/v1/projects/${t.projectId}/domains`, { name: 'problems.example.test' });
    assert.equal(created.status, 201, created.text);
    const records = created.body.records as Array<{ type: string; name: string; value: string; purpose: string; required: boolean }>;
    publishRecords(dns, records);
    const dkim = records.find((r) => r.purpose === 'dkim')!;
    // Text from DNS is hostile text: the page must show it as text, never as markup.
    dns.set(dkim.name, [{ type: 'TXT', value: 'v=DKIM1; k=rsa; p=<b>WRONG</b>' }]);

    const { context, page } = await newPage(b);
    await signIn(page, t);
    await page.getByRole('link', { name: 'Domains' }).click();
    const card = page.locator('[data-domain="problems.example.test"]');
    await card.waitFor();
    assert.equal(await card.locator('[data-problem]').count(), 0, 'no check yet, no problem');
    await card.getByRole('button', { name: 'Verify now' }).click();

    const expected = `${dkim.name} has "v=DKIM1; k=rsa; p=<b>WRONG</b>", not the expected value`;
    const dkimRow = card.locator('tr', { hasText: dkim.value });
    await dkimRow.locator('[data-problem]').waitFor();
    assert.equal(await dkimRow.locator('[data-problem]').innerText(), expected);
    assert.equal(await card.locator('b', { hasText: 'WRONG' }).count(), 0, 'rendered as text');
    assert.equal(await card.locator('[data-problem]').count(), 1, 'only the failed record has a problem');
    // The API said the same.
    const verified = await t.admin('POST', `/admin/v1/domains/${created.body.id}/verify`);
    assert.equal(verified.body.records.find((r: { purpose: string }) => r.purpose === 'dkim').problem, expected);
    await screenshot(page, 'domain-problem');

    publishRecords(dns, records);
    await card.getByRole('button', { name: 'Verify now' }).click();
    await card.locator('h2 .badge-verified').waitFor();
    await card.locator('[data-problem]').first().waitFor({ state: 'detached' });
    await context.close();
  });
});
