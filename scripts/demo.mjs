// Sends a small mixed workload to the local emulators and prints what became of each job.
// Usage: node scripts/demo.mjs <sqs-endpoint> <service-url> <prefix> <viewer-token> <management-url>
const [sqsEndpoint, serviceUrl, prefix, token, managementUrl] = process.argv.slice(2);
const auth = { headers: { Authorization: `Bearer ${token}` } };

async function sqs(action, payload) {
  const res = await fetch(sqsEndpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': `AmazonSQS.${action}` },
    body: JSON.stringify(payload),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${action} failed: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

const attr = (v, type = 'String') => ({ DataType: type, StringValue: String(v) });
const v3 = (permitId) => JSON.stringify({
  permitId, applicant: { name: 'Ada Builder', address: '1 Main St' },
  inspections: [{ date: '2026-10-01', result: 'PASS' }, { date: '2026-10-20', result: 'PASS' }],
});
const v2 = (permitId) => JSON.stringify({
  permit_id: permitId, applicant_name: 'Bo Mason', site_address: '2 Side Rd',
  inspections: [{ date: '2026-09-01', outcome: 'PASS' }],
});
const v1 = (permitId) => JSON.stringify({ id: permitId, owner: 'Old Shape Ltd', site: '9 Elm Rd', checks: '2025-01-02:PASS' });
const permit = (jobId, version, body, extra = {}) => ({
  jobId, body,
  attributes: { 'job-id': attr(jobId), tenant: attr('tenant-demo'), 'job-type': attr('permit-report'),
    'schema-version': attr(version, 'Number'), ...extra },
});

const jobs = [];
const what = {};
for (let i = 1; i <= 6; i++) { jobs.push(permit(`demo-ok-${i}`, 3, v3(`P-10${i}`))); what[`demo-ok-${i}`] = 'healthy (schema v3)'; }
jobs.push(permit('demo-ok-v2', 2, v2('P-200'))); what['demo-ok-v2'] = 'healthy (previous schema v2)';
jobs.push(permit('demo-flaky', 3, v3('P-FLAKY'))); what['demo-flaky'] = 'provider fails twice (503), then works';
jobs.push(permit('demo-quota', 3, v3('P-QUOTA'))); what['demo-quota'] = 'provider throttles once (429)';
jobs.push(permit('demo-old-schema', 1, v1('P-27'))); what['demo-old-schema'] = 'release-27 shape (schema v1): poison';
jobs.push(permit('demo-bad-utf8', 3, Buffer.from([0x7b, 0xc3, 0x28, 0x7d]).toString('base64'),
  { 'content-transfer-encoding': attr('base64'), charset: attr('UTF-8') }));
what['demo-bad-utf8'] = 'invalid UTF-8 bytes';
jobs.push(permit('demo-schema-9', 9, v3('P-9'))); what['demo-schema-9'] = 'unknown schema version 9';
jobs.push(permit('demo-dup', 3, v3('P-DUP'))); jobs.push(permit('demo-dup', 3, v3('P-DUP')));
what['demo-dup'] = 'same job id sent twice';

const { QueueUrl } = await sqs('GetQueueUrl', { QueueName: `${prefix}-jobs` });
for (const j of jobs) {
  await sqs('SendMessage', { QueueUrl, MessageBody: j.body, MessageAttributes: j.attributes });
}
console.log(`sent ${jobs.length} messages (${Object.keys(what).length} job ids) to ${prefix}-jobs; waiting for each to finish...`);

const final = new Set(['SUCCEEDED', 'QUARANTINED']);
const results = {};
const deadline = Date.now() + 120_000;
while (Date.now() < deadline) {
  for (const id of Object.keys(what)) {
    // A job is its tenant's: the ledger view names the tenant.
    const res = await fetch(`${serviceUrl}/ops/jobs/${encodeURIComponent(id)}?tenant=tenant-demo`, auth);
    if (res.ok) results[id] = await res.json();
  }
  if (Object.keys(what).every((id) => results[id] && final.has(results[id].state))) break;
  await new Promise((r) => setTimeout(r, 500));
}

// "PERMANENT limit reached: 3 of 3 attempts failed (last: why)" -> "why"
const shortReason = (reason) => {
  if (!reason) return '';
  const m = reason.match(/\(last: (.*)\)$/);
  const text = m ? m[1] : reason;
  return text.length > 72 ? text.slice(0, 71) + '…' : text;
};
const rows = Object.keys(what).map((id) => {
  const r = results[id] || {};
  const last = (r.history || []).filter((h) => h.failureClass).map((h) => h.failureClass).join(',');
  return [id, what[id], r.state || 'UNFINISHED', String(r.attempt ?? '-'), r.quarantineClass || (last ? `retried: ${last}` : '-'),
    shortReason(r.quarantineReason)];
});
const header = ['job id', 'what it is', 'state', 'attempts', 'class', 'quarantine reason'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
console.log('\n' + line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
rows.forEach((r) => console.log(line(r)));

const metrics = await (await fetch(`${managementUrl}/q/metrics`)).text();
console.log('\nmetrics:');
metrics.split('\n').filter((l) => /^poison_guard_(quarantined_total|outcomes_total|admission_rejections_total)/.test(l))
  .forEach((l) => console.log('  ' + l));
const unfinished = rows.filter((r) => r[2] === 'UNFINISHED' || !final.has(r[2]));
if (unfinished.length) { console.error(`\n${unfinished.length} jobs did not finish in time`); process.exit(1); }
