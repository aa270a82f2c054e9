// The guarded replay command: asks the operator API what a replay would do (dry run, the default)
// and only with --execute does it. A reason is always required.
//
//   node scripts/replay.mjs --url URL --reason "why this is safe" --job JOB_ID [--tenant T] [--execute]
//     (--tenant names whose job it is when two tenants' quarantined jobs share the id)
//   node scripts/replay.mjs --url URL --reason "..." --failure-class PERMANENT --tenant T [--job-type J] [--limit N] [--after CURSOR] [--execute]
//     (a bulk replay covers one tenant and one failure class: its canary answers for exactly those; --after goes on
//     past a selection whose listing went on, from the "next" a dry run or a batch printed)
//
// The token comes from --token or PG_TOKEN (an operator token to execute; a viewer token can dry-run).
// Exit codes: 0 done (a bulk replay: every selected job replayed), 1 refused or not every job replayed (they are
// listed), 2 a usage mistake, 3 a bulk replay that stopped moving (its instance may have died).
const fail = (msg, code = 2) => { console.error(msg); process.exit(code); };
// Only these options: a misspelt one (--jobtype, --job-type=x) would otherwise be ignored and widen a bulk replay.
const KNOWN = ['url', 'token', 'reason', 'job', 'tenant', 'failure-class', 'job-type', 'limit', 'after'];
const args = process.argv.slice(2);
const opt = {};
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--execute') opt.execute = true;
  else if (a.startsWith('--') && KNOWN.includes(a.slice(2))) {
    const value = args[++i];
    if (value === undefined || value.startsWith('--')) fail(`${a} needs a value`);
    opt[a.slice(2)] = value;
  } else fail(`unknown argument: ${a} (options: ${KNOWN.map((k) => `--${k} VALUE`).join(', ')}, --execute)`);
}
if (opt.limit !== undefined && !/^[1-9][0-9]*$/.test(opt.limit)) fail(`--limit must be a whole number above 0, not "${opt.limit}"`);
const url = (opt.url || process.env.PG_URL || 'http://localhost:8080').replace(/\/$/, '');
const token = opt.token || process.env.PG_TOKEN;
if (!opt.reason || !opt.reason.trim()) fail('--reason is required: say why replaying is safe now (it goes into the audit trail)');
if (!token) fail('a token is required: --token or PG_TOKEN (see scripts/dev-token.mjs for local ones)');
if (!opt.job && (!opt['failure-class'] || !opt.tenant)) fail('say what to replay: --job, or a bulk filter of --failure-class and --tenant (with --job-type if you like)');

async function call(method, path, body) {
  const res = await fetch(url + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try { json = text ? JSON.parse(text) : {}; } catch { json = { detail: text }; }
  return { status: res.status, json };
}
const line = (o) => `${o.jobId.padEnd(24)} ${String(o.outcome).padEnd(30)} ${o.generation ? `generation ${o.generation}, attempt ${o.attempt}` : (o.detail || '')}`;
const problem = (r) => `${r.status} ${r.json.title || ''}: ${r.json.detail || JSON.stringify(r.json)}`;

if (opt.job) {
  const scope = opt.tenant ? `?tenant=${encodeURIComponent(opt.tenant)}` : '';
  const r = await call('POST', `/ops/quarantine/${encodeURIComponent(opt.job)}/replay${scope}`, { reason: opt.reason, dryRun: !opt.execute });
  if (r.status >= 400) fail(problem(r), 1);
  console.log((opt.execute ? '' : 'DRY RUN (add --execute to replay)\n') + line(r.json));
  process.exit(0);
}

const selection = {
  failureClass: opt['failure-class'], tenant: opt.tenant, jobType: opt['job-type'],
  limit: opt.limit ? Number(opt.limit) : 50, reason: opt.reason, dryRun: !opt.execute, after: opt.after,
};
const r = await call('POST', '/ops/replays', selection);
if (r.status >= 400) fail(problem(r), 1);
if (!opt.execute) {
  console.log(`DRY RUN (add --execute to replay, canary first): ${r.json.jobs.length} jobs selected`);
  r.json.jobs.forEach((o) => console.log(line(o)));
  if (r.json.complete === false) console.log(`the listing goes on past these: --after ${r.json.next}`);
  if (r.json.refusal) console.log(`refused if executed: ${r.json.refusal}`);
  process.exit(0);
}
console.log(`bulk replay ${r.json.id}: ${r.json.status}, canary ${r.json.canaryJobId}`);
// A batch whose instance died keeps a running status that no longer moves: give up waiting after this long unchanged.
const STALL_MS = Number(process.env.PG_REPLAY_STALL_MS || 5 * 60_000);
let last = '';
let lastUpdate = '';
let movedAt = Date.now();
for (;;) {
  const s = await call('GET', `/ops/replays/${r.json.id}`);
  if (s.status >= 400) fail(problem(s), 1);
  const steps = s.json.outcomes || [];
  // FAILED_AGAIN: replayed, then parked again (the batch halts on it). NOT_ENDED: replayed, its outcome not known in time.
  // SENDING: its replay under way.
  const failedAgain = steps.filter((o) => o.outcome === 'FAILED_AGAIN');
  const notEnded = steps.filter((o) => o.outcome === 'NOT_ENDED');
  // REPLAYED_AGAIN: replayed, then replayed again by another action while watched: its outcome is that action's.
  const movedOn = steps.filter((o) => o.outcome === 'REPLAYED_AGAIN');
  const replayed = steps.filter((o) => o.outcome === 'REPLAYED').length + failedAgain.length + notEnded.length + movedOn.length
    + (s.json.stepsOmitted || 0);
  const notReplayed = steps.filter((o) => !['REPLAYED', 'FAILED_AGAIN', 'NOT_ENDED', 'REPLAYED_AGAIN', 'SENDING'].includes(o.outcome));
  const notNamed = s.json.notReplayedOmitted || 0;
  const summary = `${s.json.status}: ${replayed} replayed, ${notReplayed.length + notNamed} not, of ${s.json.selected} selected`;
  if (summary !== last) { console.log(summary); last = summary; }
  if (s.json.updatedAt !== lastUpdate) { lastUpdate = s.json.updatedAt; movedAt = Date.now(); }
  // ABANDONED: nothing has kept the batch's state for 2 minutes; looked at until it moves again or the stall limit.
  if (!['CANARY_RUNNING', 'WIDENING', 'ABANDONED'].includes(s.json.status)) {
    console.log(s.json.detail);
    failedAgain.forEach((o) => console.log(`failed again: ${line(o)}`));
    notEnded.forEach((o) => console.log(`not ended in time: ${line(o)}`));
    movedOn.forEach((o) => console.log(`replayed again by another action: ${line(o)}`));
    notReplayed.forEach((o) => console.log(`not replayed: ${line(o)}`));
    if (notNamed > 0) console.log(`... and ${notNamed} more not replayed (too many to keep; each is in the audit trail)`);
    // Success is every selected job replayed and seen to succeed; anything else is for the operator to look at.
    process.exit(s.json.status === 'COMPLETED'
      && notReplayed.length + notNamed + failedAgain.length + notEnded.length + movedOn.length === 0 ? 0 : 1);
  }
  if (Date.now() - movedAt > STALL_MS) {
    fail(`bulk replay ${r.json.id} has not moved since ${lastUpdate} (${s.json.status}): the instance running it may have died;`
      + ` jobs not yet replayed stay quarantined (GET /ops/replays/${r.json.id}; ${s.json.detail})`, 3);
  }
  await new Promise((res) => setTimeout(res, 1000));
}
