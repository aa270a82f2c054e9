// The console drill, in headless Chromium (Debian's, driven by playwright-core): what an operator does at 3 a.m.
//   node drill.mjs --url URL --token TOKEN --phase viewer|operator|overview|tenantless|reissue|stalled --job JOB [--tenant T] --shots DIR
//     [--overdue JOB] [--batch ID]
// viewer:   signs in, finds the job in the list, opens it, sees every action disabled and can only dry-run.
// operator: acknowledges the job, replays it with a reason (each after a confirmation step) and waits until the page
//           shows the replay completed (ledger state SUCCEEDED).
// overview: the overview lists the overdue job as overdue.
// tenantless: the record of a job that named no valid tenant opens from the list, and a dry run reaches it.
// reissue:  a job left REPLAYING by a replay whose instance died can be re-issued from its page.
// stalled:  the page of a bulk replay whose instance died says so instead of showing it running for ever.
// Prints one line per check; exits non-zero on the first that fails. Screenshots go to DIR.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = {};
for (let i = 0; i < args.length; i += 2) opt[args[i].replace(/^--/, '')] = args[i + 1];
const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
mkdirSync(opt.shots, { recursive: true });

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
class CheckFailed extends Error {}
const check = (ok, what) => {
  console.log(`${ok ? 'ok' : 'FAILED'} ${opt.phase}: ${what}`);
  if (!ok) throw new CheckFailed(what);
};
const shot = async (name) => page.screenshot({ path: join(opt.shots, `${name}.png`), fullPage: true });
const status = () => page.locator('#status').innerText();
const jobUrl = `${opt.url}/console/#/job/${encodeURIComponent(opt.tenant)}/${encodeURIComponent(opt.job)}`;
const summary = async (row) => (await page.locator('table').first().locator('tr', { has: page.locator('td', { hasText: new RegExp(`^${row}$`) }) })
  .locator('td').nth(1).innerText()).trim();

async function signIn() {
  await page.goto(`${opt.url}/console/`);
  await page.getByLabel('Token').fill(opt.token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

try {
  await signIn();
  if (opt.phase === 'viewer') {
    await page.goto(`${opt.url}/console/#/list?tenant=${encodeURIComponent(opt.tenant)}`);
    await page.getByRole('link', { name: opt.job, exact: true }).waitFor();
    check(true, 'the quarantined job is in the filtered list');
    await page.getByRole('link', { name: opt.job, exact: true }).click();
    await page.getByRole('heading', { name: new RegExp(`Job ${opt.job}`) }).waitFor();
    check((await summary('failure class')) === 'PERMANENT', 'the job page shows its failure class');
    check(await page.locator('#cannot-act').isVisible(), 'the page says this token cannot act');
    for (const id of ['ack', 'assign', 'note', 'replay', 'resolve']) {
      check(await page.locator(`#${id}`).isDisabled(), `the ${id} action is disabled for a viewer`);
    }
    await page.locator('#dry-run').click();
    await page.locator('#status', { hasText: 'Dry run' }).waitFor();
    check((await status()).includes('WOULD_REPLAY'), `a viewer may dry-run: "${await status()}"`);
    await shot('1-viewer-job');
  } else if (opt.phase === 'operator') {
    await page.goto(jobUrl);
    await page.getByRole('heading', { name: new RegExp(`Job ${opt.job}`) }).waitFor();
    await page.locator('#ack').click();
    await shot('2-operator-confirm-acknowledge');
    await page.locator('#ack-go').click();
    await page.locator('#status', { hasText: 'Acknowledge' }).waitFor();
    check((await status()).includes('ACKNOWLEDGED'), `acknowledged: "${await status()}"`);
    await page.locator('h2 .badge', { hasText: 'ACKNOWLEDGED' }).waitFor();
    check((await summary('acknowledged')).startsWith('olga'), 'the page names who acknowledged');
    await page.locator('#replay').click();
    await page.locator('#replay-reason').waitFor();
    check(await page.locator('#replay-reason').evaluate((e) => e === document.activeElement), 'the confirmation step takes the focus');
    await page.locator('#replay-reason').fill('release-27 reader enabled (console drill)');
    await shot('3-operator-confirm-replay');
    await page.locator('#replay-go').click();
    await page.locator('#status', { hasText: 'Replay' }).waitFor();
    check((await status()).includes('REPLAYED'), `replayed: "${await status()}"`);
    const deadline = Date.now() + 60_000;
    // The ledger says SUCCEEDED first; the record's status follows (the replay outcome is written after it).
    let ledger = '';
    let record = '';
    while (Date.now() < deadline) {
      await page.reload();
      await page.getByRole('heading', { name: new RegExp(`Job ${opt.job}`) }).waitFor();
      ledger = await summary('ledger state');
      record = await summary('record status');
      if (ledger === 'SUCCEEDED' && record === 'REPLAYED') break;
      await page.waitForTimeout(1000);
    }
    check(ledger === 'SUCCEEDED', `the page shows the replay completed (ledger state ${ledger})`);
    check(record === 'REPLAYED', `the record says REPLAYED (${record})`);
    await shot('4-operator-replay-completed');
  } else if (opt.phase === 'overview') {
    await page.locator('#overdue-heading').waitFor();
    const overdue = page.locator('.card', { has: page.locator('#overdue-heading') });
    await overdue.getByRole('link', { name: opt.overdue, exact: true }).waitFor({ timeout: 20_000 });
    const row = overdue.locator('tr', { has: page.getByRole('link', { name: opt.overdue, exact: true }) });
    check((await row.innerText()).includes('acknowledge overdue'), `the overview shows ${opt.overdue} as overdue: "${(await row.innerText()).replace(/\s+/g, ' ')}"`);
    check(await page.getByRole('img', { name: /Admission rejections per minute/ }).isVisible(), 'the rejection chart is drawn');
    await shot('5-overview-overdue');
  } else if (opt.phase === 'tenantless') {
    await page.goto(`${opt.url}/console/#/list`);
    await page.getByRole('link', { name: opt.job, exact: true }).waitFor();
    check(true, 'the record of a job that named no valid tenant is in the list');
    await page.getByRole('link', { name: opt.job, exact: true }).click();
    await page.getByRole('heading', { name: new RegExp(`Job ${opt.job}`) }).waitFor({ timeout: 10_000 });
    check((await summary('tenant')) === '(none)', `the job page says it has no tenant: "${await summary('tenant')}"`);
    await page.locator('#dry-run').click();
    await page.locator('#status', { hasText: 'Dry run' }).waitFor();
    check((await status()).includes('named no valid tenant'), `its dry run is answered for it: "${await status()}"`);
    await shot('6-tenantless-job');
  } else if (opt.phase === 'reissue') {
    await page.goto(jobUrl);
    await page.getByRole('heading', { name: new RegExp(`Job ${opt.job}`) }).waitFor();
    check((await summary('record status')) === 'REPLAYING', `the page shows the replay unfinished: "${await summary('record status')}"`);
    check(await page.locator('#replay').isEnabled(), 'an operator may re-issue it');
    check((await page.locator('#replay').innerText()).includes('Re-issue'), `the button says re-issue: "${await page.locator('#replay').innerText()}"`);
    await page.locator('#replay').click();
    await page.locator('#replay-reason').fill('the instance died mid-replay (console drill)');
    await shot('7-reissue-confirm');
    await page.locator('#replay-go').click();
    await page.locator('#status', { hasText: 'Replay' }).waitFor();
    check((await status()).includes('REPLAYED'), `re-issued: "${await status()}"`);
  } else if (opt.phase === 'stalled') {
    // This browser's clock an hour slow: the page must judge the batch's age by the server's clock, not this one.
    await page.clock.setFixedTime(new Date(Date.now() - 3_600_000));
    await page.goto(`${opt.url}/console/#/bulk/${encodeURIComponent(opt.batch)}`);
    await page.locator('#bulk-progress').waitFor();
    await page.locator('#bulk-stalled').waitFor({ timeout: 10_000 });
    check((await page.locator('#bulk-stalled').innerText()).includes('has most likely died'),
      `the page says the batch's instance died: "${await page.locator('#bulk-stalled').innerText()}"`);
    await shot('8-bulk-stalled');
  } else {
    throw new Error(`unknown phase ${opt.phase}`);
  }
} catch (e) {
  await shot(`failed-${opt.phase}`).catch(() => {});
  if (!(e instanceof CheckFailed)) console.log(`FAILED ${opt.phase}: ${e.message}`);
  await browser.close();
  process.exit(1);
}
await browser.close();
