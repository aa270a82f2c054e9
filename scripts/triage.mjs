// Triage of a quarantined job from the shell: acknowledge it, assign it, leave a note. Every action is audited.
//
//   node scripts/triage.mjs --url URL --job JOB_ID [--tenant T] acknowledge
//   node scripts/triage.mjs --url URL --job JOB_ID [--tenant T] assign NAME --reason "why"   (assign "" to unassign)
//   node scripts/triage.mjs --url URL --job JOB_ID [--tenant T] note "what you found"
//   node scripts/triage.mjs --url URL --job JOB_ID [--tenant T] show
//
// The token comes from --token or PG_TOKEN (an operator token; a viewer token can only show).
const args = process.argv.slice(2);
const opt = {};
const words = [];
for (let i = 0; i < args.length; i++) {
  if (args[i].startsWith('--')) opt[args[i].slice(2)] = args[++i];
  else words.push(args[i]);
}
const fail = (msg, code = 2) => { console.error(msg); process.exit(code); };
const url = (opt.url || process.env.PG_URL || 'http://localhost:8080').replace(/\/$/, '');
const token = opt.token || process.env.PG_TOKEN;
const [action, value] = words;
if (!opt.job) fail('--job is required');
if (!token) fail('a token is required: --token or PG_TOKEN (see scripts/dev-token.mjs for local ones)');
if (!['acknowledge', 'assign', 'note', 'show'].includes(action)) fail('say what to do: acknowledge, assign NAME, note TEXT or show');
if (action === 'assign' && value === undefined) fail('assign needs a name ("" to unassign)');
if (action === 'assign' && !opt.reason) fail('assign needs --reason');
if (action === 'note' && !value) fail('note needs its text');

const scope = opt.tenant ? `?tenant=${encodeURIComponent(opt.tenant)}` : '';
const base = `${url}/ops/quarantine/${encodeURIComponent(opt.job)}`;
const request = {
  acknowledge: ['POST', `${base}/acknowledge${scope}`, undefined],
  assign: ['POST', `${base}/assign${scope}`, { assignee: value, reason: opt.reason }],
  note: ['POST', `${base}/notes${scope}`, { text: value }],
  show: ['GET', `${base}${scope}`, undefined],
}[action];
const res = await fetch(request[1], {
  method: request[0],
  headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
  body: request[2] === undefined ? undefined : JSON.stringify(request[2]),
});
const text = await res.text();
let json;
try { json = text ? JSON.parse(text) : {}; } catch { json = { detail: text }; }
if (res.status >= 400) fail(`${res.status} ${json.title || ''}: ${json.detail || text}`, 1);
const t = action === 'show' ? { triageState: json.triageState, triage: json.record.triage } : json;
console.log(`${opt.job}: ${t.triageState}, owner ${t.triage.owner}${t.triage.ownerDefaulted ? ' (default)' : ''}`
  + `${t.triage.acknowledgedBy ? `, acknowledged by ${t.triage.acknowledgedBy}` : ''}${t.triage.assignee ? `, assigned to ${t.triage.assignee}` : ''}`
  + `, ${t.triage.notes.length} notes`);
