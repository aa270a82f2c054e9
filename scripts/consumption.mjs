// Shows whether a worker consumes, and resumes consumption after a systemic failure is fixed.
//
//   node scripts/consumption.mjs --url URL                          # state: breakers, systemic guard, trip, worker fitness, stopped workers
//   node scripts/consumption.mjs --url URL --resume --reason "why"  # operator: clear the systemic-failure guard
//
// The token comes from --token or PG_TOKEN (viewer to read, operator to resume). Each worker has its
// own guard, and the state shown is the guard of the worker that answered. A resume reaches one worker;
// every other worker whose guard tripped before it reads its audit entry and resumes within
// systemic.fleet-check-interval (5 s).
const args = process.argv.slice(2);
const opt = {};
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--resume') opt.resume = true;
  else if (a.startsWith('--')) opt[a.slice(2)] = args[++i];
  else { console.error(`unexpected argument: ${a}`); process.exit(2); }
}
const url = (opt.url || process.env.PG_URL || 'http://localhost:8080').replace(/\/$/, '');
const token = opt.token || process.env.PG_TOKEN;
const fail = (msg, code = 2) => { console.error(msg); process.exit(code); };
if (!token) fail('a token is required: --token or PG_TOKEN (see scripts/dev-token.mjs for local ones)');
if (opt.resume && (!opt.reason || !opt.reason.trim())) fail('--reason is required: say what was fixed (it goes into the audit trail)');

const res = await fetch(url + '/ops/consumption' + (opt.resume ? '/resume' : ''), {
  method: opt.resume ? 'POST' : 'GET',
  headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
  body: opt.resume ? JSON.stringify({ reason: opt.reason }) : undefined,
});
const text = await res.text();
let json;
try { json = text ? JSON.parse(text) : {}; } catch { json = { detail: text }; }
if (res.status >= 400) fail(`${res.status} ${json.title || ''}: ${json.detail || text}`, 1);
console.log(`admit: ${json.admit}   systemic guard: ${json.systemic}   worker: ${json.worker}`);
for (const [name, state] of Object.entries(json.breakers || {})) console.log(`breaker ${name}: ${state}`);
if (json.trip) {
  console.log(`tripped at ${json.trip.at}: ${json.trip.cause}`);
  if (json.trip.signature) console.log(`signature: ${json.trip.signature}`);
  if (json.trip.jobTypes && json.trip.jobTypes.length) console.log(`job types: ${json.trip.jobTypes.join(', ')}`);
  if (json.trip.sampleJobIds) console.log(`sample jobs: ${json.trip.sampleJobIds.join(', ')}`);
}
// Every worker behind the address, as each recorded its guard (this answer comes from one of them).
if (json.fleet && json.fleet.unavailable) console.log(`fleet: ${json.fleet.unavailable}`);
if (json.fleet && json.fleet.trippedWorkers) {
  if (json.fleet.trippedWorkers.length === 0) console.log('fleet: no worker is stopped by its guard');
  json.fleet.trippedWorkers.forEach((w) => console.log(`fleet: ${w.worker} stopped since ${w.since} (last said so ${w.heardAt}): ${w.cause}`));
} else if (json.fleet && json.fleet.trippedCount !== undefined) {
  console.log(`fleet: ${json.fleet.trippedCount} worker(s) stopped by their guard (which, for a token of every tenant)`);
}
if (opt.resume) console.log(json.resumed ? 'resumed' : "this worker's guard was not tripped");
if (opt.resume && json.otherWorkers) console.log(`other workers: ${json.otherWorkers}`);
if (opt.resume && json.audited === false) console.log('warning: the audit trail did not take the entry (the service logged it at ERROR)');
